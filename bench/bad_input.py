"""Benchmark: how fast ``gitmedic detect`` refuses hostile input, as ratios to its peers.

The unit tests (tests/cli/test_bad_input.py) check what detect answers to each input
(exit 2, the file and line, bounded memory, nothing changed); how long it takes
depends on the machine, so it is measured here, side by side with what the same
machine spends on the floor of any Python command and on a bare parse:

- ``python -c pass``: the interpreter's own start-up, the floor of every row;
- ``gitmedic detect`` of a folder with one ConfigMap: start-up plus one small parse,
  the peer of the two inputs detect must refuse without reading them whole (a
  50 MiB file: refused by its size; an alias bomb: refused where the expansion
  passes the bound);
- a bare libyaml parse (PyYAML's CSafeLoader, fresh process) of the file with a tab
  after 20,000 documents, stopping at the same tab: the peer of detect finding it.

Every command is a fresh process, run once untimed, then ``--runs`` times
interleaved round-robin; the median is reported. Targets: a refusal costs at most
1.5x a one-object detect, and finding the late tab at most 2x the bare parse
(the detect/parse target of bench/run.py). Exits 1 when a target is missed.

    .venv/bin/python bench/bad_input.py [--runs 7]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from run import ROOT, gitmedic_cmd, machine, medians, revision

sys.path.insert(0, str(ROOT))  # the tests' own inputs, from the repo root
from tests.cli.bad_inputs import (
    write_bomb,
    write_huge,
    write_late_tab,
    write_small,
)

PARSE = (
    "import sys, yaml\n"
    "with open(sys.argv[1], encoding='utf-8') as f:\n"
    "    try:\n"
    "        for _ in yaml.load_all(f, Loader=yaml.CSafeLoader): pass\n"
    "    except yaml.YAMLError:\n"
    "        sys.exit(2)\n"
)
EXITS = (0, 1, 2)  # detect exits 2 on bad input; the parse peer as well, at the tab


@dataclass(frozen=True)
class Row:
    name: str
    command: str
    peer: str | None  # the row this one is compared with
    target: float | None  # the largest ratio to the peer that meets the target


ROWS = (
    Row("python", "`python -c pass`", None, None),
    Row("start-up", "`gitmedic detect --list`", None, None),
    Row("one object", "`gitmedic detect` of one ConfigMap", None, None),
    Row("50 MiB file", "`gitmedic detect` of one 50 MiB file (refused by size)", "one object", 1.5),
    Row("alias bomb", "`gitmedic detect` of a 9^9 alias bomb", "one object", 1.5),
    Row("late tab", "`gitmedic detect`, tab after 20,000 documents", "late tab parse", 2.0),
    Row("late tab parse", "bare CSafeLoader parse of the same file, to the tab", None, None),
)


def commands(tmp: Path) -> dict[str, list[str]]:
    gitmedic = gitmedic_cmd()

    def detect(folder: Path) -> list[str]:
        return [*gitmedic, "detect", str(folder), "--format", "json"]

    write_late_tab(tmp / "tab")
    return {
        "python": [sys.executable, "-c", "pass"],
        "start-up": [*gitmedic, "detect", "--list"],
        "one object": detect(write_small(tmp / "small")),
        "50 MiB file": detect(write_huge(tmp / "huge")),
        "alias bomb": detect(write_bomb(tmp / "bomb")),
        "late tab": detect(tmp / "tab"),
        "late tab parse": [sys.executable, "-c", PARSE, str(tmp / "tab" / "large.yaml")],
    }


def table(med: dict[str, float]) -> tuple[str, bool]:
    """The Markdown table, and whether every target is met."""
    lines = [
        "| input | command | median s | x `python -c pass` | peer | x peer | target |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    met = True
    for row in ROWS:
        seconds = med[row.name]
        floor = f"{seconds / med['python']:.1f}"
        if row.peer is None or row.target is None:
            lines.append(f"| {row.name} | {row.command} | {seconds:.3f} | {floor} | | | |")
            continue
        ratio = seconds / med[row.peer]
        met = met and ratio <= row.target
        verdict = f"<= {row.target} ({'met' if ratio <= row.target else 'MISSED'})"
        lines.append(
            f"| {row.name} | {row.command} | {seconds:.3f} | {floor} | {row.peer} "
            f"| {ratio:.2f} | {verdict} |"
        )
    return "\n".join(lines), met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-bad-input-") as tmp:
        med = medians(commands(Path(tmp)), args.runs, EXITS)
    text, met = table(med)
    print(f"- machine: {machine()}\n- commit: {revision()}\n- runs: {args.runs}\n\n{text}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
