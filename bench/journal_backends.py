"""Benchmark: what a journal operation costs on SQLite (the default) and on PostgreSQL.

The operations a monitor step pays per app: the lease renewal (``acquire``), one
step appended (``append``), the transaction read back (``load``: plan and records),
and the app's transactions listed (``transactions``). Each is run ``--ops`` times
in one process on a fresh journal; the median and the 95th percentile of the wall
time per operation are printed. PostgreSQL is Debian's server as the tests run it
(tests/support/postgres.py: tools/kube/build.sh's cache, else PATH), on 127.0.0.1,
with fsync off (a test server: a real one's commit waits for its disk).

    PYTHONPATH=src .venv/bin/python bench/journal_backends.py [--ops 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.postgres import find_postgres, running_postgres  # noqa: E402
from tests.transaction.fakes import plan  # noqa: E402

from gitmedic.reconciler.transaction import Journal, Phase, Record  # noqa: E402


def timed(ops: int, op: Callable[[int], object]) -> tuple[float, float]:
    """Median and 95th percentile, in milliseconds, of ``op(i)`` for i in range(ops)."""
    spent = []
    for i in range(ops):
        began = time.perf_counter()
        op(i)
        spent.append((time.perf_counter() - began) * 1000)
    spent.sort()
    return statistics.median(spent), spent[int(len(spent) * 0.95) - 1]


def measure(journal: Journal, ops: int) -> dict[str, tuple[float, float]]:
    for n in range(20):  # an app with some history
        journal.create(replace(plan(), txn_id=f"old/{n}", attempt=n + 1), float(n))
    journal.create(plan(), 100.0)
    return {
        "acquire (renew)": timed(ops, lambda i: journal.acquire("shop", "bot", 1000.0 + i, 60)),
        "append": timed(
            ops, lambda i: journal.append("inc-1/1", Record(i + 1, Phase.PR_OPENED, 1.0, {}))
        ),
        "load (300 records)": timed(ops, lambda i: journal.load("inc-1/1")),
        "transactions (21)": timed(max(ops // 10, 10), lambda i: journal.transactions(app="shop")),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["SQLite"] = measure(Journal(Path(tmp) / "j.sqlite"), args.ops)
    found = find_postgres()
    if isinstance(found, str):
        print(f"PostgreSQL skipped: {found}")
    else:
        with running_postgres(found) as server:
            journal = Journal(server.create_database("bench"))
            results["PostgreSQL"] = measure(journal, args.ops)
            journal.close()
    print("| operation | " + " | ".join(f"{b} median / p95 (ms)" for b in results) + " |")
    print("|---|" + "---|" * len(results))
    for name in next(iter(results.values())):
        cells = [f"{r[name][0]:.2f} / {r[name][1]:.2f}" for r in results.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
