"""Benchmark: whole-repo ``gitmedic detect .`` against kubeconform on the same tree (CPU).

Issue 22's goal: whole-repo detection within 2x of kubeconform or kube-linter on
the same tree. Each repository is checked from its root, as a new user would:

- ``gitmedic detect . --format json``: every kustomize root rendered once
  (``kubectl kustomize``), every chart rendered (``helm template``), loose files
  parsed, each app evaluated by every built-in detector and validated against
  the Kubernetes schemas;
- ``kubeconform -strict -summary .``: every YAML file of the tree parsed and
  validated against the same Kubernetes schemas (kubernetes-validate's
  v1.37.0-local-strict set, made standalone once into a cache folder, since
  kubeconform cannot follow their shared ``_definitions.json``; no network).
  kubeconform renders nothing: it validates the files as they are.

CPU time is user + system of the process and everything it waited for (helm,
kubectl), from ``getrusage(RUSAGE_CHILDREN)``, so machine load moves it less than
wall time. gitmedic runs through a two-line launcher that, as it exits, reports its
own CPU apart from its children's (the renderers and git), and ``gitmedic detect
--list`` is timed too: the start-up any detect pays. Each command runs once
untimed, then ``--runs`` times interleaved; medians are reported. Exits 1 when a
ratio passes 2.0.

    .venv/bin/python bench/whole_repo.py --kubeconform /path/to/kubeconform [--runs 3] \
        [REPO ...]   # default: the two repos of /work/shared/data/gitops-repos

kubeconform: ``GOBIN=$(mktemp -d) go install github.com/yannh/kubeconform/cmd/kubeconform@latest``.
helm comes from ``.ci/tools.sh helm`` (the pinned build the tests use).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from run import ROOT, gitmedic_cmd, machine, revision

REPOS = [
    Path("/work/shared/data/gitops-repos") / n for n in ("podinfo", "flux2-kustomize-helm-example")
]
SCHEMA_SET = "v1.37.0-local-strict"
FORMAT = 2  # of the cached standalone schemas: bump to rebuild them
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gitmedic-bench"
_DEFS = "/api/_definitions.json#/$defs/"


# gitmedic's CLI, then its own and its children's CPU (user + system) on stderr's last line.
SPLIT = (
    "import json, resource, sys\n"
    "from gitmedic.bot.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, "
    "resource.RUSAGE_CHILDREN))\n"
    "    sys.stderr.write('\\n' + json.dumps({'self': own.ru_utime + own.ru_stime, "
    "'children': kids.ru_utime + kids.ru_stime}) + '\\n')\n"
    "sys.exit(code)\n"
)


def cpu_run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str, str]:
    """(CPU s, wall s, stdout, stderr) of one run, children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1, 2):  # 2: detect's errors, counted in the table
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return cpu, wall, proc.stdout, proc.stderr


def standalone_schemas() -> Path:
    """kubernetes-validate's schemas with their shared definitions inlined (once)."""
    import kubernetes_validate

    source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / SCHEMA_SET
    out = CACHE / f"kubeconform-{SCHEMA_SET}-{FORMAT}"
    if (out / ".complete").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    defs: dict[str, Any] = json.loads((source / "_definitions.json").read_text())["$defs"]
    for path in sorted(source.glob("*.json")):
        if path.name.startswith("_"):
            continue
        schema = json.loads(path.read_text())
        schema.pop("$id", None)  # a URL id would make "#/$defs/..." refer to that URL
        needed = _closure(schema, defs)
        text = json.dumps({**schema, "$defs": {k: defs[k] for k in sorted(needed)}})
        (out / path.name).write_text(text.replace(_DEFS, "#/$defs/"))
    (out / ".complete").write_text("")
    return out


def _closure(schema: Any, defs: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and "#/$defs/" in ref:  # in a schema, or between defs
                name = ref.partition("#/$defs/")[2]
                if name not in seen and name in defs:
                    seen.add(name)
                    pending.append(defs[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return seen


def helm_env() -> dict[str, str]:
    folder = subprocess.run(
        [str(ROOT / ".ci/tools.sh"), "helm"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}


def measure(repo: Path, kubeconform: str, schemas: Path, runs: int) -> dict[str, Any]:
    env = helm_env()
    commands = {
        "gitmedic": [sys.executable, "-c", SPLIT, "detect", ".", "--format", "json"],
        "kubeconform": [
            kubeconform,
            "-strict",
            "-summary",
            "-ignore-missing-schemas",
            "-output",
            "json",
            "-schema-location",
            f"{schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
            ".",
        ],
        "start-up": [*gitmedic_cmd(), "detect", "--list"],
    }
    outputs = {name: cpu_run(cmd, repo, env)[2] for name, cmd in commands.items()}  # warm-up
    cpu: dict[str, list[float]] = {n: [] for n in commands}
    wall: dict[str, list[float]] = {n: [] for n in commands}
    split: dict[str, list[float]] = {"self": [], "children": []}
    for _ in range(runs):
        for name, cmd in commands.items():
            c, w, _, err = cpu_run(cmd, repo, env)
            cpu[name].append(c)
            wall[name].append(w)
            if name == "gitmedic":
                own = json.loads(err.rstrip().rpartition("\n")[2])
                for part in split:
                    split[part].append(own[part])
    report = json.loads(outputs["gitmedic"])
    summary = json.loads(outputs["kubeconform"]).get("summary", {})
    return {
        "repo": repo.name,
        "cpu": {n: statistics.median(v) for n, v in cpu.items()},
        "wall": {n: statistics.median(v) for n, v in wall.items()},
        "split": {n: statistics.median(v) for n, v in split.items()},
        "findings": len(report["findings"]),
        "errors": len(report["errors"]),
        "kubeconform": summary,
    }


def table(rows: list[dict[str, Any]], runs: int, load: str) -> str:
    lines = [
        f"- machine: {machine()}; commit {revision()}; median of {runs} runs after a warm-up;"
        f" load average (1, 5, 15 min) {load}",
        "",
        "| repo | gitmedic CPU s | kubeconform CPU s | CPU ratio | gitmedic wall s |"
        " kubeconform wall s | wall ratio | gitmedic findings / errors | kubeconform resources |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        ratio = r["cpu"]["gitmedic"] / max(r["cpu"]["kubeconform"], 1e-3)
        wall_ratio = r["wall"]["gitmedic"] / max(r["wall"]["kubeconform"], 1e-3)
        kc = r["kubeconform"]
        lines.append(
            f"| {r['repo']} | {r['cpu']['gitmedic']:.2f} | {r['cpu']['kubeconform']:.2f} |"
            f" {ratio:.1f}x | {r['wall']['gitmedic']:.2f} | {r['wall']['kubeconform']:.2f} |"
            f" {wall_ratio:.1f}x | {r['findings']} / {r['errors']} | {kc.get('valid', '?')} valid,"
            f" {kc.get('invalid', '?')} invalid,"
            f" {kc.get('errors', '?')} errors, {kc.get('skipped', '?')} skipped |"
        )
    lines += [
        "",
        "Where gitmedic's CPU goes (medians; renderers = its child processes: kubectl"
        " kustomize, helm, git):",
        "",
        "| repo | gitmedic's own Python CPU s | renderers CPU s | renderers / kubeconform |"
        " `detect --list` (start-up) CPU s | start-up / kubeconform |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        peer = max(r["cpu"]["kubeconform"], 1e-3)
        lines.append(
            f"| {r['repo']} | {r['split']['self']:.2f} | {r['split']['children']:.2f} |"
            f" {r['split']['children'] / peer:.1f}x | {r['cpu']['start-up']:.2f} |"
            f" {r['cpu']['start-up'] / peer:.1f}x |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path, default=REPOS)
    parser.add_argument("--kubeconform", default=os.environ.get("KUBECONFORM", "kubeconform"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    schemas = standalone_schemas()
    before = os.getloadavg()
    rows = [measure(r.resolve(), args.kubeconform, schemas, args.runs) for r in args.repos]
    after = os.getloadavg()
    load = " to ".join(", ".join(f"{x:.1f}" for x in avg) for avg in (before, after))
    print(table(rows, args.runs, load))
    worst = max(r["cpu"]["gitmedic"] / max(r["cpu"]["kubeconform"], 1e-3) for r in rows)
    return 0 if worst <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
