"""The real-world corpus: its apps, one `gitmedic detect` run each, and the golden files.

A golden file (``tests/corpus/golden/<app>.yaml``) pins what detect says about one app:
its exit code, its errors and every finding. Each critical and warning carries a
``verdict`` (``true`` or ``false-positive``) and a one-line ``why`` a reviewer can
check against the manifests. ``GITMEDIC_CORPUS_UPDATE=1`` rewrites the goldens from
a fresh run, keeping the judgement of every finding it already had and marking the
new ones ``why: TODO``, which the test refuses until a person writes the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
REPO = HERE.parents[1]
CORPUS = HERE.parent / "fixtures" / "corpus"
GOLDEN = HERE / "golden"
INDEX = HERE / "apps.yaml"
UPDATE_ENV = "GITMEDIC_CORPUS_UPDATE"
TODO = "TODO"
JUDGED = ("critical", "warning")
VERDICTS = ("true", "false-positive")

Golden = dict[str, Any]


@dataclass(frozen=True)
class CorpusApp:
    name: str
    path: str  # what detect is pointed at, relative to the app's fixture folder
    namespace: str
    corpus: Path = CORPUS  # the folder holding the app's fixture folder

    @property
    def root(self) -> Path:
        return self.corpus / self.name

    @property
    def golden(self) -> Path:
        return GOLDEN / f"{self.name}.yaml"


@dataclass(frozen=True)
class Run:
    exit_code: int
    findings: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    stderr: str


def load_apps() -> list[CorpusApp]:
    entries = yaml.safe_load(INDEX.read_text(encoding="utf-8"))["apps"]
    return [CorpusApp(e["name"], e["path"], e["namespace"]) for e in entries]


def detect_argv(app: CorpusApp) -> list[str]:
    return ["detect", app.path, "--namespace", app.namespace, "--format", "json"]


def run_detect(app: CorpusApp, env: dict[str, str]) -> Run:
    """The real CLI in a subprocess, from the app's folder (so paths read as in its repo)."""
    argv = [sys.executable, "-m", "gitmedic", *detect_argv(app)]
    done = subprocess.run(argv, cwd=app.root, env=env, capture_output=True, text=True, timeout=600)
    return parse_run(done.returncode, done.stdout, done.stderr)


def parse_run(exit_code: int, stdout: str, stderr: str) -> Run:
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        report = {"findings": [], "errors": [{"file": "", "line": 0, "message": stdout[-500:]}]}
    errors = [
        {**e, "message": _portable(str(e.get("message", "")))} for e in report.get("errors", [])
    ]
    return Run(exit_code, report.get("findings", []), errors, stderr)


def _portable(message: str) -> str:
    """A message as it reads in any clone: a tool's absolute path made repo-relative."""
    return message.replace(f"{REPO}{os.sep}", "")


def _ref(obj: dict[str, Any]) -> str:
    return f"{obj.get('kind', '')}/{obj.get('namespace', '')}/{obj.get('name', '')}"


def finding_id(finding: dict[str, Any]) -> str:
    """What a finding is about, stable across runs: detector/rule, resource, related objects."""
    text = f"{finding['detector']}/{finding['rule']} {_ref(finding['resource'])}"
    related = [_ref(r) for r in finding.get("related") or []]
    return text + (" -> " + ", ".join(related) if related else "")


def observed(run: Run) -> list[dict[str, Any]]:
    """The run's findings as golden entries (ids made unique by a #n suffix)."""
    seen: Counter[str] = Counter()
    entries = []
    for finding in run.findings:
        base = finding_id(finding)
        seen[base] += 1
        ident = base if seen[base] == 1 else f"{base} #{seen[base]}"
        summary = _portable(str(finding["summary"]))
        entry = {"id": ident, "severity": finding["severity"], "summary": summary}
        if finding.get("file"):
            entry["at"] = _portable(f"{finding['file']}:{finding.get('line', 0)}")
        entries.append(entry)
    return entries


def _judgement(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, str]:
    """The verdict and why an entry keeps: the old one while the finding says the same
    (severity and summary), else TODO with the old judgement as a hint."""
    severity = new["severity"]
    if old is None:
        return {"verdict": TODO, "why": TODO} if severity in JUDGED else {}
    if (old.get("severity"), old.get("summary")) == (severity, new["summary"]):
        return {k: old[k] for k in ("verdict", "why") if k in old}
    if severity not in JUDGED:
        return {}
    if not old.get("why"):
        return {"verdict": TODO, "why": TODO}
    said = f"{old.get('severity')} saying {old.get('summary')!r}"
    return {"verdict": TODO, "why": f"{TODO} (was {said}: {verdict(old)}, {old['why']})"}


def regenerate(app: CorpusApp, run: Run, old: Golden | None) -> Golden:
    """A fresh golden from ``run`` that keeps ``old``'s judgements of the same findings."""
    previous = {e["id"]: e for e in (old or {}).get("findings", [])}
    findings = [{**e, **_judgement(previous.get(e["id"]), e)} for e in observed(run)]
    golden: Golden = {"app": app.name, "command": "gitmedic " + " ".join(detect_argv(app))}
    golden["exit_code"] = run.exit_code
    if run.exit_code == 2:
        golden["known_failure"] = (old or {}).get("known_failure") or TODO
    golden["errors"] = [
        {"file": e.get("file", ""), "line": e.get("line", 0), "message": e.get("message", "")}
        for e in run.errors
    ]
    golden["findings"] = findings
    return golden


def load_golden(app: CorpusApp) -> Golden | None:
    if not app.golden.is_file():
        return None
    loaded: Golden = yaml.safe_load(app.golden.read_text(encoding="utf-8"))
    return loaded


def write_golden(app: CorpusApp, golden: Golden) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(golden, sort_keys=False, allow_unicode=True, width=1000)
    app.golden.write_text(text, encoding="utf-8")


def verdict(entry: dict[str, Any]) -> str:
    """An entry's verdict as text: `verdict: true` unquoted reads as a YAML boolean."""
    value = entry.get("verdict", "")
    return "true" if value is True else str(value)


def unjudged(golden: Golden) -> list[str]:
    """Criticals and warnings without a verdict and a written reason (TODO counts as none)."""
    missing = []
    for entry in golden.get("findings", []):
        if entry["severity"] not in JUDGED:
            continue
        why = str(entry.get("why") or "").strip()
        said = verdict(entry)
        if said not in VERDICTS or not why or why.startswith(TODO):
            missing.append(f"{entry['severity']} {entry['id']}: verdict={said!r} why={why!r}")
    if golden.get("exit_code") == 2 and str(golden.get("known_failure", TODO)).startswith(TODO):
        missing.append("exit 2 with no known_failure reason")
    return missing


def differences(golden: Golden, run: Run) -> list[str]:
    """How the run departs from the golden: exit code, findings (id and severity), errors."""
    diffs = []
    if golden.get("exit_code") != run.exit_code:
        diffs.append(f"exit code {run.exit_code}, golden says {golden.get('exit_code')}")
    pinned = {e["id"]: e["severity"] for e in golden.get("findings", [])}
    now = {e["id"]: e["severity"] for e in observed(run)}
    for ident in sorted(now.keys() - pinned.keys()):
        diffs.append(f"new {now[ident]}: {ident}")
    for ident in sorted(pinned.keys() - now.keys()):
        diffs.append(f"gone {pinned[ident]}: {ident}")
    for ident in sorted(now.keys() & pinned.keys()):
        if now[ident] != pinned[ident]:
            diffs.append(f"{ident}: now {now[ident]}, golden says {pinned[ident]}")
    judged_said = {e["id"]: e["summary"] for e in golden.get("findings", [])}
    for entry in observed(run):  # a judgement holds for what the finding says
        said = judged_said.get(entry["id"])
        if entry["severity"] in JUDGED and said is not None and said != entry["summary"]:
            diffs.append(f"{entry['id']}: now says {entry['summary']!r}, golden {said!r}")
    # where, not the words: an error's text may carry the machine's details (a resolver's
    # address in a failed chart pull), its file and line do not
    places = sorted(_place(e) for e in run.errors)
    if places != sorted(_place(e) for e in golden.get("errors", [])):
        diffs.append(
            f"errors differ from the golden's: {[e.get('message') for e in run.errors][:5]}"
        )
    return diffs


def _place(error: dict[str, Any]) -> tuple[str, int]:
    return str(error.get("file", "")), int(error.get("line") or 0)


@dataclass(frozen=True)
class Precision:
    true_criticals: int
    criticals: int
    false_criticals: list[str]  # "app: id: why"

    @property
    def ratio(self) -> float:
        return self.true_criticals / self.criticals if self.criticals else 1.0


def precision(goldens: dict[str, Golden]) -> Precision:
    """Precision of criticals by the goldens' own verdicts."""
    true_count, total, false = 0, 0, []
    for name, golden in sorted(goldens.items()):
        for entry in golden.get("findings", []):
            if entry["severity"] != "critical":
                continue
            total += 1
            if verdict(entry) == "true":
                true_count += 1
            else:
                false.append(f"{name}: {entry['id']}: {entry.get('why', '')}")
    return Precision(true_count, total, false)


def update_mode() -> bool:
    return os.environ.get(UPDATE_ENV) == "1"
