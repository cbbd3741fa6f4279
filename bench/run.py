"""Benchmark of ``gitmedic detect``: every real app, and a generated 10,000-object namespace.

Every measurement is a fresh process, start-up included, because that is what
a CI job or a pre-commit hook pays. Each command runs once untimed (to warm
the page cache) and then ``--runs`` times, interleaved with the baseline so
machine noise hits both alike; the median is reported.

The baseline is a bare libyaml parse of the same 10,000-object file in a fresh
process (PyYAML's CSafeLoader, consuming every document). The target is
detect/parse <= 2.0: loading, indexing and every detector together may cost at
most one more parse. The script exits 1 when the target is missed, so it can be
re-run after new detectors land (``make bench``); it rewrites bench/RESULTS.md
unless ``--no-write`` is given (notes below its marker line are kept).
``--profile`` prints where the time goes.

    python bench/run.py [--runs 5] [--objects 10000] [--no-write] [--profile]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from gen_namespace import NAMESPACE, generate

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "data" / "apps"
RESULTS = ROOT / "bench" / "RESULTS.md"
TARGET_RATIO = 2.0
# RESULTS.md keeps everything from this line on across re-runs (hand-written notes).
NOTES_MARKER = "<!-- notes: kept by bench/run.py -->"
PARSE = (
    "import sys, yaml\n"
    "with open(sys.argv[1], encoding='utf-8') as f:\n"
    "    for _ in yaml.load_all(f, Loader=yaml.CSafeLoader): pass\n"
)


@dataclass(frozen=True)
class Row:
    name: str
    target: str
    objects: int
    findings: int
    seconds: float


def gitmedic_cmd() -> list[str]:
    script = Path(sys.executable).parent / "gitmedic"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gitmedic"]


def timed(
    cmd: Sequence[str], exits: tuple[int, ...] = (0, 1)
) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode not in exits:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return elapsed, proc


def medians(
    commands: dict[str, list[str]], runs: int, exits: tuple[int, ...] = (0, 1)
) -> dict[str, float]:
    """Median wall time per command; runs are interleaved round-robin."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for cmd in commands.values():
        timed(cmd, exits)  # warm-up, untimed
    for _ in range(runs):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, exits)[0])
    return {name: statistics.median(ts) for name, ts in times.items()}


def detect_cmd(path: Path, namespace: str) -> list[str]:
    return [*gitmedic_cmd(), "detect", str(path), "--namespace", namespace, "--format", "json"]


def counts(path: Path, namespace: str) -> tuple[int, int]:
    from gitmedic.reconciler.manifests.load import load_desired

    objects = len(load_desired(path, namespace=namespace).snapshot)
    report = json.loads(timed(detect_cmd(path, namespace))[1].stdout)
    return objects, len(report["findings"])


def targets(generated: Path) -> dict[str, tuple[Path, str]]:
    index = yaml.safe_load((APPS / "INDEX.yaml").read_text())
    out = {name: (APPS / name / v["path"], v["namespace"]) for name, v in sorted(index.items())}
    out["generated-10k"] = (generated, NAMESPACE)
    return out


def measure(generated: Path, runs: int) -> tuple[list[Row], float, float]:
    tgts = targets(generated)
    commands = {name: detect_cmd(path, ns) for name, (path, ns) in tgts.items()}
    commands["parse-10k"] = [sys.executable, "-c", PARSE, str(generated)]
    commands["startup"] = [*gitmedic_cmd(), "detect", "--list"]
    med = medians(commands, runs)
    rows = []
    for name, (path, ns) in tgts.items():
        objects, findings = counts(path, ns)
        shown = path.name if name == "generated-10k" else str(path.relative_to(APPS))
        rows.append(Row(name, shown, objects, findings, med[name]))
    return rows, med["parse-10k"], med["startup"]


def machine() -> str:
    libyaml = getattr(yaml, "__with_libyaml__", False)
    return (
        f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
        f"Python {platform.python_version()}, PyYAML {yaml.__version__} "
        f"(libyaml {'yes' if libyaml else 'no'})"
    )


def detector_count() -> int:
    from gitmedic.detectors.builtin import builtin_registry

    return len(builtin_registry())


def revision() -> str:
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return proc.stdout.strip() or "unknown"


def report(rows: list[Row], parse_s: float, startup_s: float, size: int, runs: int) -> str:
    gen = rows[-1]
    ratio = gen.seconds / parse_s
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    lines = [
        "# Benchmark: `gitmedic detect`",
        "",
        f"- machine: {machine()}",
        f"- commit: {revision()}, {detector_count()} built-in detectors, "
        f"{datetime.date.today().isoformat()}",
        "- command: `make bench` (= `.venv/bin/python bench/run.py`)",
        f"- method: median of {runs} fresh processes per row (start-up included), after one "
        "untimed warm-up; runs interleaved round-robin; `--format json`",
        "",
        "| target | path | objects | findings | median s |",
        "|---|---|---:|---:|---:|",
        *(
            f"| {r.name} | {r.target} | {r.objects} | {r.findings} | {r.seconds:.3f} |"
            for r in rows
        ),
        f"| start-up | `gitmedic detect --list` | | | {startup_s:.3f} |",
        f"| libyaml baseline | bare CSafeLoader parse of {gen.target} | {gen.objects} | "
        f"| {parse_s:.3f} |",
        "",
        f"Generated namespace: {gen.objects} objects, {size / 1e6:.2f} MB "
        "(`bench/gen_namespace.py`, seed 7).",
        "",
        f"**Ratio detect/parse on the 10,000-object namespace: {ratio:.2f}** "
        f"(target <= {TARGET_RATIO}; {verdict} the target).",
        "",
    ]
    return "\n".join(lines)


def profile(path: Path) -> None:
    import cProfile
    import pstats

    from gitmedic.bot.cli.main import main

    profiler = cProfile.Profile()
    with open(os.devnull, "w") as devnull:
        stdout, sys.stdout = sys.stdout, devnull
        try:
            profiler.runcall(main, ["detect", str(path), "--namespace", NAMESPACE])
        finally:
            sys.stdout = stdout
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def kept_notes() -> str:
    old = RESULTS.read_text() if RESULTS.exists() else ""
    return "\n" + old[old.index(NOTES_MARKER) :] if NOTES_MARKER in old else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--no-write", action="store_true", help="do not rewrite RESULTS.md")
    parser.add_argument("--profile", action="store_true", help="cProfile the 10k run too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitmedic-bench-") as tmp:
        generated = generate(Path(tmp) / "namespace-10k.yaml", args.objects)
        rows, parse_s, startup_s = measure(generated, args.runs)
        text = report(rows, parse_s, startup_s, generated.stat().st_size, args.runs)
        if args.profile:
            profile(generated)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text + kept_notes())
    ratio = rows[-1].seconds / parse_s
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
