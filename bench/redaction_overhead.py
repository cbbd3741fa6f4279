"""Benchmark: what issue 27's redaction layers cost and what they mask on real repositories.

For each repository of ``tests/fixtures/corpus`` (real public GitOps trees,
none of them planting secrets), ``gitmedic detect REPO --format json`` is run
twice, once with the sources of a baseline tree (``--baseline-src``, e.g. the
main branch) and once with this tree's, and the two reports are compared:

- CPU time of each run (median of ``--runs``; CPU, so other load moves it less);
- how many ``****`` each report holds, and every line that differs: a line the
  new layers mask that the baseline did not is either a credential the repo
  really holds (read it) or a false positive (a resource name, file name or
  line number masked: a defect, issue 22).

    PATH=$(.ci/tools.sh):$PATH .venv/bin/python bench/redaction_overhead.py \
        --baseline-src /work/main/src [--runs 3] [REPO ...]
"""

from __future__ import annotations

import argparse
import difflib
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def detect(src: Path, repo: Path) -> tuple[float, str]:
    """CPU seconds (user + system of the run and what it waited for) and the report."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-m", "gitmedic.bot.cli.main", "detect", str(repo), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, out.stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-src", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("repos", nargs="*", type=Path)
    args = parser.parse_args()
    repos = args.repos or sorted(p for p in CORPUS.iterdir() if p.is_dir())
    print("| repo | baseline CPU s | this CPU s | baseline **** | this **** | lines newly masked |")
    print("|---|---|---|---|---|---|")
    total_new = 0
    for repo in repos:
        times: dict[str, list[float]] = {"base": [], "this": []}
        outs: dict[str, str] = {}
        for _ in range(args.runs):
            for name, src in (("base", args.baseline_src), ("this", ROOT / "src")):
                seconds, outs[name] = detect(src, repo)
                times[name].append(seconds)
        new = [
            line[1:].strip()
            for line in difflib.unified_diff(outs["base"].splitlines(), outs["this"].splitlines())
            if line.startswith("+") and not line.startswith("+++") and "****" in line
        ]
        total_new += len(new)
        print(
            f"| {repo.name} | {statistics.median(times['base']):.2f} | "
            f"{statistics.median(times['this']):.2f} | {outs['base'].count('****')} | "
            f"{outs['this'].count('****')} | {len(new)} |"
        )
        for line in new:
            print(f"|  | newly masked: `{line[:160]}` | | | | |")
    print(f"\nlines newly masked in all: {total_new}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
