"""Three ``gitmedic serve --shard-leases`` replicas on one PostgreSQL journal: the holder
of an app SIGKILLed mid-transaction, another takes the app and finishes that transaction.

The world is the shard tests' (:mod:`tests.realkube.shard_replicas`: real Leases on a
bare API server, the chart's RBAC) with one journal for all: Debian's PostgreSQL
(:mod:`tests.support.postgres`) named by ``GITMEDIC_JOURNAL_URL``. The replicas serve
one repository on the local forge (its PRs are in the repository, the same for all)
and the sim, whose cluster is that repository's ``main`` deployed: the fault
committed there is what every replica would see, and so is the fix once merged.

A fault is committed into an app the replica ``a`` holds. ``a`` runs with the crash
tests' hook (``tests/support/killhook``) set to *stop* (SIGSTOP) at one of three
points of the fix's transaction: right before the journal records the merge (the PR
is merged on the forge, the journal does not know it), right after it (merged, not
verified), or after the first measurement of the verification window. The test reads
that from the shared journal, SIGKILLs ``a``, and checks that another replica takes
the app's Lease within the lease duration (plus rounds): ``b``, which served every app
before the others started (so its loop had resumed the journal once already), says it
resumes that very transaction where ``a`` left it, verifies the deployed fix (never
merging it again) and commits it; and, on the forge and in the journal: one
PR per attempt and one attempt, no merge without its verification, the outcome
comment once, the fault fixed on ``main`` with no other app touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter, PrState
from gitmedic.reconciler.transaction import Journal, Outcome, Phase, TxnState
from gitmedic.reconciler.transaction import Phase as P
from gitmedic.reconciler.transaction.forge_ports import LOCK_LABEL
from gitmedic.reconciler.transaction.window import Stage
from gitmedic.sim.faults.git import commit_all
from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import ControlPlane
from tests.realkube.processes import stop_recorded
from tests.realkube.shard_replicas import Replicas, shares, until

pytestmark = REALKUBE

APPS = ["shop", "blog", "wiki"]
LEASE_S = 6  # rounds every 1.2 s, renewals every 2 s
ROUND_S = LEASE_S / 5


def stopped(pid: int) -> bool:
    """Is ``pid`` stopped by a signal (its state ``T`` in /proc)?"""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def in_flight(journal: Journal, app: str) -> list[TxnState]:
    return [t for t in journal.transactions(app=app) if not t.settled]


# Where a is stopped, and the phase its journal then shows (the heir resumes there).
KILL_POINTS = [
    pytest.param("before:merged", P.GATED, id="merged-on-the-forge-not-in-the-journal"),
    pytest.param("merged", P.MERGED, id="merged-not-verified"),
    pytest.param("measured-window", P.SYNCED, id="mid-window"),
]


@pytest.mark.parametrize(("kill_at", "left_at"), KILL_POINTS)
def test_a_holder_killed_mid_transaction_is_resumed_by_another_from_the_shared_journal(
    lease_plane: ControlPlane, tmp_path: Path, postgres_url: str, kill_at: str, left_at: Phase
) -> None:
    # one namespace per kill point: the one before is still being deleted (--wait=false)
    namespace = f"t-pg-{os.getpid()}-{kill_at.replace(':', '-')}"
    lease_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    shared = {"GITMEDIC_JOURNAL_URL": postgres_url}
    replicas = Replicas(lease_plane, namespace, tmp_path, APPS, lease_s=LEASE_S, env=shared)
    journal = Journal(postgres_url)
    try:
        # b first, alone: it holds and steps every app (its loops resume the journal), then
        # hands two over; the first slot's share is the larger once a is gone, so b is
        # the heir and takes back an app it served before
        replicas.start("b")
        until(replicas.alive(lambda: writers(postgres_url, replicas) == {"b": 3}), 60)
        replicas.start("a", {"GITMEDIC_TEST_KILL_AT": f"stop:{kill_at}"})  # the hooks are on
        replicas.start("c")
        until(replicas.alive(lambda: shares(replicas.holders()) == {"a": 1, "b": 1, "c": 1}), 180)
        (app,) = [app for app, holder in replicas.holders().items() if holder == "a"]
        others = [other for other in APPS if other != app]

        web = replicas.repo / "apps" / app / "web.yaml"
        healthy = git(replicas.repo, "rev-parse", "main")
        web.write_text(web.read_text().replace("targetPort: 8080", "targetPort: 9090"))
        commit_all(replicas.repo, f"{app}: the service's port")

        # a is stopped by the hook where the test asked: the fix's PR merged on the forge
        # in every case, the journal at the phase before or after it
        until(replicas.alive(lambda: stopped(replicas.pids["a"])), 150)
        (txn,) = in_flight(journal, app)
        assert txn.phase is left_at, txn.phase
        assert txn.plan.attempt == 1 and txn.mu_post is None and txn.pr is not None
        assert LocalForge(replicas.repo).get_pr(txn.pr).state is PrState.MERGED
        assert bool(txn.merge_sha) is (left_at is not P.GATED), "the journal knows the merge"
        if left_at is P.SYNCED:
            assert txn.measured(Stage.WINDOW, txn.merge_sha or ""), "a measured the window once"
        holder_a = dict(locks(postgres_url))[app]
        assert holder_a.split(":")[1] == str(replicas.pids["a"]), "the journal's writer is a"
        os.kill(replicas.pids["a"], signal.SIGKILL)

        took = until(replicas.alive(lambda: replicas.holders()[app] in ("b", "c"), but="a"), 60)
        heir = replicas.holders()[app]
        assert heir == "b", "the first slot's share is the larger: b takes the app back"
        print(f"shards on PostgreSQL: {app} taken over in {took:.1f} s (lease {LEASE_S} s)")
        assert took <= LEASE_S + 2 * ROUND_S + 2, f"{took:.1f} s"

        def settled() -> bool:
            return (
                all(t.settled for t in journal.transactions(app=app))
                and len(journal.transactions(app=app)) == 2
            )  # the fix and its memory PR

        resumed = until(replicas.alive(settled, but="a"), 150)
        print(f"shards on PostgreSQL: {txn.plan.txn_id} settled {resumed:.1f} s after the takeover")
        assert f"{app}: txn: resuming {txn.plan.txn_id} at {left_at.value}" in replicas.log(heir)
        holder_heir = dict(locks(postgres_url))[app]
        assert holder_heir.split(":")[1] == str(replicas.pids[heir]), "the writer is the heir"

        txns = journal.transactions(app=app)
        fix = next(t for t in txns if t.plan.txn_id == txn.plan.txn_id)
        assert [t.plan.strategy for t in txns if t.plan.strategy != "memory"] == [
            fix.plan.strategy
        ], "one attempt: the one resumed"
        assert fix.outcome is Outcome.COMMITTED and fix.mu_post is not None, fix.reason
        assert fix.merge_sha and fix.pr == txn.pr
        assert fix.merge_sha == (txn.merge_sha or fix.merge_sha), "the merge a recorded"
        steps = [r.phase for r in fix.records if not {"measurement", "announced"} & set(r.data)]
        # merged once on the forge (by a), recorded once; deployed, judged and committed
        assert steps == [P.PR_OPENED, P.GATED, P.MERGED, P.SYNCED, P.COMMITTED], steps
        assert fix.measured(Stage.WINDOW, fix.merge_sha), "judged by a window measured"

        forge = LocalForge(replicas.repo)
        prs = forge.list_prs(PrFilter.ALL)
        assert not [pr.number for pr in prs if pr.state is PrState.OPEN], "no PR left open"
        bot = [pr for pr in prs if pr.branch.startswith("gitmedic/")]
        assert len({pr.branch for pr in bot}) == len(bot), "one PR per attempt (its branch)"
        assert sorted(pr.number for pr in bot) == sorted(t.pr for t in txns if t.pr is not None)
        for t in txns:
            if t.merge_sha and t.plan.strategy != "memory":  # every merged change verified
                assert t.mu_post is not None and t.outcome in (Outcome.COMMITTED, Outcome.REVERTED)
            told = [c for c in forge.list_comments(t.pr or 0) if c.topic == f"txn/{t.plan.txn_id}"]
            assert len(told) == 1, f"{t.plan.txn_id}: the outcome comment, once"
        assert not [pr.number for pr in prs if LOCK_LABEL in pr.labels], "lock labels removed"
        merged = [pr for pr in bot if pr.state is PrState.MERGED]
        merges = git(replicas.repo, "rev-list", "--merges", "--count", f"{healthy}..main")
        assert int(merges) == len(merged), "each merged PR merged once"
        assert git(replicas.repo, "diff", healthy, "main", "--", "apps") == "", "fault fixed"
        for other in others:
            assert journal.transactions(app=other) == [], f"{other} untouched"
    finally:
        stop_recorded(replicas.procs.folder)
        lease_plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def locks(url: str) -> list[tuple[str, str]]:
    """The journal's writer rows: (app, holder)."""
    import psycopg

    with psycopg.connect(url) as conn:
        return [(r[0], r[1]) for r in conn.execute("SELECT app, holder FROM locks")]


def writers(url: str, replicas: Replicas) -> Counter[str]:
    """How many apps' writer rows each replica holds (a loop's step writes its app's)."""
    by_pid = {str(pid): name for name, pid in replicas.pids.items()}
    return Counter(by_pid.get(holder.split(":")[1], "?") for _, holder in locks(url))
