"""The real-world corpus as a benchmark: gitmedic detect beside kube-score, kubeconform...

Per app of ``tests/corpus/apps.yaml``: the findings of ``gitmedic detect`` by severity
(with the goldens' count of true criticals) and its CPU time, run as the test tier runs
it (a fresh process in the app's folder, ``--format json``); then each peer that is
installed, on the app rendered once (``bench/corpus_peers.py``), with its CPU time and
what it reported in its own terms. CPU time is the child's user + system time, which
load on a shared machine disturbs far less than wall time.

``--precision`` prints only the precision of criticals by the goldens' own verdicts,
and every false critical with its reason. Without ``--no-write`` the table replaces
the corpus section of bench/RESULTS.md (between its markers; appended if absent).

    python bench/corpus.py [--no-write] [--precision] [--kubeconform PATH] [--kube-linter PATH]
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from corpus_peers import (
    PeerResult,
    find_tool,
    kube_linter,
    kube_score,
    kubeconform,
    measured,
    offline_schemas,
    render,
    write_stream,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the goldens' model, from the repo root
from tests.corpus.golden import (  # noqa: E402
    CorpusApp,
    detect_argv,
    load_apps,
    load_golden,
    parse_run,
    precision,
    verdict,
)

RESULTS = ROOT / "bench" / "RESULTS.md"
BEGIN, END = "<!-- corpus: begin (bench/corpus.py) -->", "<!-- corpus: end -->"
SEVERITIES = ("critical", "warning", "info")


def detect_row(app: CorpusApp) -> tuple[str, float]:
    run = measured([sys.executable, "-m", "gitmedic", *detect_argv(app)], cwd=app.root)
    result = parse_run(run.exit_code, run.stdout, run.stderr)
    counts = Counter(f["severity"] for f in result.findings)
    golden = load_golden(app) or {}
    true_crit = sum(
        1
        for e in golden.get("findings", [])
        if e["severity"] == "critical" and verdict(e) == "true"
    )
    cells = [str(counts[s]) for s in SEVERITIES]
    cells[0] += f" ({true_crit} true)" if counts["critical"] else ""
    return f"{' | '.join(cells)} | {run.exit_code} | {run.cpu_seconds:.2f}", run.cpu_seconds


def peer_cells(app: CorpusApp, tools: dict[str, str | None], work: Path) -> list[PeerResult]:
    objects, failures = render(app.root / app.path, app.namespace, app.name)
    stream = work / f"{app.name}.yaml"
    write_stream(objects, stream)
    results = [
        PeerResult("objects", 0.0, f"{len(objects)}" + (" (render failed)" * bool(failures)))
    ]
    if tools["kube-score"]:
        results.append(kube_score(tools["kube-score"], stream))
    if tools["kubeconform"]:
        results.append(kubeconform(tools["kubeconform"], stream, offline_schemas(work)))
    if tools["kube-linter"]:
        results.append(kube_linter(tools["kube-linter"], stream))
    return results


def table(tools: dict[str, str | None]) -> tuple[str, dict[str, float]]:
    peers = [name for name, path in tools.items() if path]
    head = "| app | objects | critical | warning | info | exit | detect CPU s |"
    head += "".join(f" {p} | {p} CPU s |" for p in peers)
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    totals: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for app in load_apps():
            cells, cpu = detect_row(app)
            totals["gitmedic detect"] = totals.get("gitmedic detect", 0.0) + cpu
            results = peer_cells(app, tools, Path(tmp))
            row = f"| {app.name} | {results[0].summary} | {cells} |"
            for result in results[1:]:
                row += f" {result.summary} | {result.cpu_seconds:.2f} |"
                totals[result.tool] = totals.get(result.tool, 0.0) + result.cpu_seconds
            lines.append(row)
            print(row, flush=True)
    return "\n".join(lines), dict(totals)


def precision_text() -> str:
    goldens = {app.name: load_golden(app) or {} for app in load_apps()}
    result = precision(goldens)
    lines = [
        f"Precision of criticals by the goldens' verdicts: {result.true_criticals}/"
        f"{result.criticals} = {result.ratio:.1%} (issue 22 asks >= 95%)."
    ]
    lines += [f"- false critical: {line}" for line in result.false_criticals]
    return "\n".join(lines)


def revision() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True)
    return done.stdout.decode().strip()


def section(body: str, totals: dict[str, float], tools: dict[str, str | None]) -> str:
    missing = [name for name, path in tools.items() if not path]
    sums = ", ".join(f"{tool} {cpu:.1f} s" for tool, cpu in totals.items())
    command = " ".join([".venv/bin/python", "bench/corpus.py", *sys.argv[1:]])
    return "\n".join(
        [
            BEGIN,
            "## Real-world corpus (issue 22): detect beside its peers",
            "",
            f"- commit {revision()}, {datetime.date.today().isoformat()}, nproc {os.cpu_count()}",
            f"- command: `{command}` (goldens: tests/corpus/golden/)",
            "- peers: kube-score v1.20.0 (`.ci/tools.sh kube-score`); kubeconform from"
            " `GOBIN=DIR go install github.com/yannh/kubeconform/cmd/kubeconform@latest` (v0.8.0);"
            " kube-linter: the Go module proxy refuses both `golang.stackrox.io/kube-linter` and"
            " `github.com/stackrox/kube-linter` (403), so it is not run",
            "- gitmedic: `gitmedic detect PATH --namespace NS --format json` in the app's folder;"
            " critical (n true) counts the goldens' verdicts",
            "- peers read the app rendered once (helm template / kubectl kustomize / loose"
            " files); kubeconform validates offline against kubernetes-validate's schemas",
            f"- not run (not installable here): {', '.join(missing) or 'none'}",
            f"- total CPU: {sums}",
            "",
            body,
            "",
            precision_text(),
            END,
        ]
    )


def write_results(text: str) -> None:
    current = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else ""
    if BEGIN in current and END in current:
        before, rest = current.split(BEGIN, 1)
        current = before + text + rest.split(END, 1)[1]
    else:
        current = current.rstrip("\n") + "\n\n" + text + "\n"
    RESULTS.write_text(current, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--precision", action="store_true", help="print precision and stop")
    parser.add_argument("--kubeconform")
    parser.add_argument("--kube-linter")
    args = parser.parse_args()
    if args.precision:
        print(precision_text())
        return
    helm = find_tool("helm", "v3.22.0", None)
    if helm:
        os.environ["PATH"] = f"{Path(helm).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # as the test tier: the Flux apps' remote charts from a cache seeded with charts add
    from tests.support.real_charts import seed_chart_cache

    held = tempfile.TemporaryDirectory(prefix="gitmedic-bench-charts-")
    os.environ["GITMEDIC_CHART_CACHE"] = str(Path(held.name) / "cache")
    seed_chart_cache(dict(os.environ), Path(held.name) / "packages")
    tools = {
        "kube-score": find_tool("kube-score", "v1.20.0", None),
        "kubeconform": find_tool("kubeconform", None, args.kubeconform),
        "kube-linter": find_tool("kube-linter", None, args.kube_linter),
    }
    body, totals = table(tools)
    text = section(body, totals, tools)
    print(text)
    if not args.no_write:
        write_results(text)


if __name__ == "__main__":
    main()
