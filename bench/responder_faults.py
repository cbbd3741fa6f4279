"""Proposal time per fault and commits walked by bisect, over the A-class fault catalogue.

Each fault of tests/responder/catalog.py is committed into a fresh copy of its real
app; the incident's proposal is timed (Responder.propose only) with no LLM at all.
With ``--depth N`` the fault sits under N later commits to the app's files that
change no object (comments), so bisect has to walk back past them.

    .venv/bin/python bench/responder_faults.py [--depth N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.responder.catalog import FAULTS
from tests.responder.support import app_repo, inject

from gitmedic.bot.responder.responder import Responder


def no_llm(**kwargs: Any) -> Any:
    raise AssertionError("LLM called")


def one(fault: Any, depth: int) -> tuple[float, int, bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        app = app_repo(Path(tmp) / "repo", fault.app, fault.nodes)
        original = app.files()
        _, incident = inject(app, fault)
        assert incident is not None, fault.id
        first = app.repo.objects()[0].file
        for i in range(depth):  # unrelated later commits: bisect must walk past them
            _comment(app, i)
            original[first] = f"# reviewed {i}\n".encode() + original[first]
        start = time.perf_counter()
        proposal = Responder(app.repo, completion=no_llm).propose(incident)
        seconds = time.perf_counter() - start
        app.repo.apply(proposal.edits)
        return seconds, proposal.commits_walked, app.files() == original, proposal.strategy


def _comment(app: Any, i: int) -> None:
    """A later commit to the app's first file that changes no object (a comment)."""
    path = app.git.root / app.repo.objects()[0].file
    path.write_text(f"# reviewed {i}\n" + path.read_text())
    app.git.commit(f"later {i}", ".")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=0)
    args = parser.parse_args()
    rows = [(f.id, *one(f, args.depth)) for f in FAULTS]
    for fid, secs, walked, ok, strategy in rows:
        print(f"{fid:52} {strategy:8} walked={walked:3} {secs * 1000:7.0f} ms ok={ok}")
    times = [r[1] for r in rows]
    bisected = [r[2] for r in rows if r[4] in ("bisect", "playbook") and r[2]]
    print(
        f"faults {len(rows)}, restored exactly {sum(r[3] for r in rows)}, "
        f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms, "
        f"commits walked median {statistics.median(bisected) if bisected else 0}, "
        f"max {max(bisected) if bisected else 0}"
    )


if __name__ == "__main__":
    main()
