"""Crash tests' world: ``gitmedic run`` in a subprocess, killed at journal phases, and the
promises checked on the local forge, the journal and main afterwards.

Two faults on the example shop: one whose first candidate commits (catalog's
targetPort), and one whose first candidate regresses (demo story (b) style: a
release merged as two commits, an entrypoint for a tag that was never pushed;
restoring the image alone crash-loops, is reverted, and the retry that keeps it
and restores the entrypoint commits).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter, PrState
from gitmedic.reconciler.transaction import Journal, Outcome, TxnState
from gitmedic.reconciler.transaction.forge_ports import LOCK_LABEL
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

ROOT = Path(__file__).parents[2]
HOOK = ROOT / "tests" / "support" / "killhook"
KILLED = -signal.SIGKILL
RUN_TIMEOUT_S = 300.0


def commit_fault(tmp: Path) -> tuple[Path, str]:
    """(repo, healthy baseline sha): catalog's targetPort broken; the first fix commits."""
    repo = baseline_repo(tmp)
    healthy = git(repo, "rev-parse", "HEAD")
    catalog = repo / APP / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace("targetPort: 3550", "targetPort: 3551", 1))
    git(repo, "commit", "-qam", "catalog: move to the new port")
    return repo, healthy


def regress_fault(tmp: Path) -> tuple[Path, str]:
    """(repo, healthy baseline sha): a release whose first candidate fix regresses."""
    repo = baseline_repo(tmp)
    healthy = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "release")
    catalog = repo / APP / "catalog.yaml"
    entry = '          command: ["/catalog", "serve", "--grpc"]\n          ports:'
    catalog.write_text(catalog.read_text().replace("          ports:", entry, 1))
    git(repo, "commit", "-qam", "catalog: the gRPC entrypoint of 2.1.0")
    catalog.write_text(catalog.read_text().replace("shop-catalog:2.0.1", "shop-catalog:2.1.0", 1))
    git(repo, "commit", "-qam", "catalog: release 2.1.0")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge release 2.1.0", "release")
    return repo, healthy


def argv(repo: Path) -> list[str]:
    run = ["run", str(repo), "--path", APP, "--namespace", NAMESPACE]
    return [sys.executable, "-m", "gitmedic", *run, "--cluster", "sim", "--forge", "local",
            "--once", "--json"]  # fmt: skip


def env(kill_at: str = "") -> dict[str, str]:
    # src first: the subprocess runs this tree's code whichever install the venv holds.
    found = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HOOK), str(ROOT / "src"), str(ROOT)])}
    found.pop("GITMEDIC_TEST_KILL_AT", None)
    if kill_at:
        found["GITMEDIC_TEST_KILL_AT"] = kill_at
    return found


def run(repo: Path, kill_at: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv(repo), env=env(kill_at), capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, cwd=ROOT)  # fmt: skip


def kill_chain(repo: Path, kills: list[str]) -> list[int]:
    """One run per kill point, each resuming what the last one's kill left; then runs until
    one exits by itself. Returns every exit code (the kills' first)."""
    codes = []
    for kill in kills:
        done = run(repo, kill)
        codes.append(done.returncode)
        assert done.returncode == KILLED, f"{kill} was never reached:\n{done.stderr[-2000:]}"
    return [*codes, until_exit(repo)]


def operations(repo: Path) -> int:
    """How many operations (journal writes and forge calls, see ``tests/support/kill_at``)
    a run that nobody kills takes on a copy of ``repo`` as it is now."""
    copy = repo.parent / f"{repo.name}-counted"
    shutil.copytree(repo, copy, symlinks=True)
    tally = repo.parent / f"{repo.name}-operations"
    done = run(copy, f"count:{tally}")
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return int(tally.read_text())


def kill_at_random(repo: Path, seed: int) -> list[int]:
    """SIGKILL the run right after a seeded random operation of the run (a journal write
    or a forge call, counted on a copy first: the moment is inside the run whatever the
    machine's speed), then restart until it exits. Returns the exit codes."""
    total = operations(repo)
    assert total > 1, f"a run of {total} operations has no moment inside it"
    nth = random.Random(seed).randint(1, total - 1)  # at least one operation after it
    done = run(repo, f"op@{nth}")
    assert done.returncode == KILLED, (
        f"op@{nth} of {total} was never reached:\n{done.stderr[-2000:]}"
    )
    return [done.returncode, until_exit(repo)]


def until_exit(repo: Path, tries: int = 3) -> int:
    for _ in range(tries):
        done = run(repo)
        if done.returncode != KILLED:
            # What the restart reported, to tell which promise broke (its JSON and log).
            assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
            assert json.loads(done.stdout)["healthy"] is True
            return done.returncode
    raise AssertionError("the run never exited by itself")


def transactions(repo: Path) -> list[TxnState]:
    return Journal(repo / ".git" / "gitmedic" / "journal.sqlite").transactions(app="shop")


def check_promises(repo: Path, healthy: str, *, attempts: int) -> None:
    """Every promise of a transaction, after the kills and restarts (see the module doc)."""
    forge = LocalForge(repo)
    prs = forge.list_prs(PrFilter.ALL)
    txns = transactions(repo)
    assert not [pr.number for pr in prs if pr.state is PrState.OPEN], "no PR left open"
    bot = [pr for pr in prs if pr.branch.startswith("gitmedic/")]
    assert len({pr.branch for pr in bot}) == len(bot), "one PR per attempt (its branch)"
    assert sorted(pr.number for pr in bot) == sorted(t.pr for t in txns if t.pr is not None)
    # by attempt: the journal lists by creation time on the sim's clock, which starts at the
    # same epoch in every process, so an attempt created after a restart can come first
    fixes = sorted((t for t in txns if t.plan.strategy != "memory"), key=lambda t: t.plan.attempt)
    assert len(fixes) == attempts, [t.plan.txn_id for t in txns]
    for t in txns:
        assert t.settled, f"{t.plan.txn_id} left at {t.phase.value}"
        if t.merge_sha and t.plan.strategy != "memory":  # every merged change verified
            assert t.mu_post is not None and t.outcome in (Outcome.COMMITTED, Outcome.REVERTED)
        told = [c for c in forge.list_comments(t.pr or 0) if c.topic == f"txn/{t.plan.txn_id}"]
        assert len(told) == 1, f"{t.plan.txn_id}: the outcome comment, once"
    assert not [pr.number for pr in prs if LOCK_LABEL in pr.labels], "every lock label removed"
    assert fixes[-1].outcome is Outcome.COMMITTED
    assert git(repo, "diff", healthy, "main", "--", APP) == "", "main ends on the healthy app"
    incident = fixes[-1].plan.incident
    outcomes = git(repo, "show", "main:.gitmedic/outcomes.jsonl").splitlines()
    assert [json.loads(line)["id"] for line in outcomes].count(incident) == 1, "recorded once"
