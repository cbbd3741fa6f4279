"""A retry is checkpointed on the cluster its predecessor's revert left, not on the candidate.

On a real cluster the undone candidate's damage outlives its revert for a while:
the Deployment controller scales the candidate's crash-looping ReplicaSet down
on a later sync (later still on a loaded control plane: seen on the real
engines of tests/realkube), and within maxSurge the revert's own pods wait for
that. Both real-engine revert tests failed so: the revert was judged restored
on the candidate's pods, the retry was planned at once with the monitor's
reading from before the first attempt as its checkpoint, and the lingering
crash loop, "caused by the change, absent at the checkpoint", failed it fast.
Now the revert counts as synced once what the candidate caused has gone (within
the sync timeout), and the checkpoint is read when the retry is planned.

The sim scales a ReplicaSet whose pods cannot run down at once, so this cluster
keeps the last crash-looping pods (and their ReplicaSet) in its snapshots for
``linger_s`` after the sim dropped them, hiding the newer pods that maxSurge
would keep from starting meanwhile, as a slow controller would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.builtin.pod_crashloop import detect as crash_loops
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.transaction import Journal, Phase, TxnState
from tests.bot.test_retry_extends import RELEASES, _release_in_two_commits
from tests.transaction.e2e_world import git


class SlowScaleDown(SimCluster):
    """The sim, with crash-looping pods removed ``linger_s`` after the sim removed them."""

    def __init__(
        self, repo: Path, path: str, namespace: str, baseline_rev: str, linger_s: float
    ) -> None:
        super().__init__(repo, path, namespace, baseline_rev=baseline_rev)
        self.linger_s = linger_s
        self.kept: list[Obj] = []  # the last crash-looping pods with their ReplicaSets
        self.gone_at: float | None = None
        self.lingered = 0  # snapshots that showed a pod the sim had already removed

    def snapshot(self) -> Snapshot:
        now = self.clock.now()
        snapshot = super().snapshot()
        crashing = {f.resource.name for f in crash_loops(snapshot)}
        if crashing:
            self.kept = [o for o in snapshot if _of_crashing(o, crashing, snapshot)]
            self.gone_at = None
            return snapshot
        if not self.kept:
            return snapshot
        self.gone_at = now if self.gone_at is None else self.gone_at
        if now - self.gone_at > self.linger_s:
            self.kept = []
            return snapshot
        present = {(o.kind, o.namespace, o.name) for o in snapshot}
        extra = [o for o in self.kept if (o.kind, o.namespace, o.name) not in present]
        self.lingered += bool(extra)
        # The controller keeps within maxSurge: the revert's new pods wait for the old ones
        workloads = {snapshot.owner_workload(o).name for o in self.kept if o.kind == "Pod"}
        kept = [o for o in snapshot if not _of_crashing(o, workloads, snapshot)]
        return Snapshot([*kept, *extra], mode=snapshot.mode, taken_at=snapshot.taken_at)


def _of_crashing(obj: Obj, workloads: set[str], snapshot: Snapshot) -> bool:
    """A pod of a crash-looping workload that is not Ready, or the ReplicaSet owning it."""
    if obj.kind == "Pod":
        ready = all(s.get("ready") for s in obj.status.get("containerStatuses") or [])
        return not ready and snapshot.owner_workload(obj).name in workloads
    if obj.kind == "ReplicaSet":
        owners = obj.metadata.get("ownerReferences") or []
        return any(o.get("name") in workloads for o in owners) and bool(obj.status.get("replicas"))
    return False


SYNC_TIMEOUT_S = LoopConfig("shop", Path("."), "", "").sync_timeout_s


def _run(tmp_path: Path, linger_s: float) -> tuple[Loop, SlowScaleDown, Path, bytes]:
    world, releases = RELEASES["shop"]
    repo, path, namespace, file = world(tmp_path)
    original = file.read_bytes()
    _release_in_two_commits(repo, file.parent, *releases[0])
    healthy = git(repo, "rev-parse", "HEAD~2")
    cluster = SlowScaleDown(repo, path, namespace, healthy, linger_s)
    config = LoopConfig("shop", repo, path, namespace, policy=DEFAULT_POLICY)
    journal = Journal(tmp_path / "j.sqlite")
    loop = Loop(config, cluster, LocalForge(repo), journal, list(builtin_registry()))
    return loop, cluster, file, original


def _reverted_then_committed(loop: Loop, file: Path, original: bytes) -> tuple[TxnState, ...]:
    healthy_at_end = loop.run_once()
    (report,) = loop.reports.values()
    outcomes = [(t.outcome.value, t.reason) for t in report.transactions]
    assert healthy_at_end is True, outcomes
    assert [o for o, _ in outcomes] == ["reverted", "committed"], outcomes
    first = report.transactions[0]
    assert first.reason.startswith("failed fast: pod-crashloop"), first.reason
    repo = loop.config.repo
    assert git(repo, "show", f"main:{file.relative_to(repo)}") + "\n" == original.decode()
    return report.transactions


CRASH = "pod-crashloop Deployment/shop/catalog"
PULL = "pod-image-pull Deployment/shop/catalog"


@pytest.mark.integration
def test_the_revert_waits_for_the_undone_candidate_s_crash_loop_to_go(tmp_path: Path) -> None:
    loop, cluster, file, original = _run(tmp_path, linger_s=60.0)
    first, retry = _reverted_then_committed(loop, file, original)
    assert cluster.lingered, "the undone candidate's pod outlived its revert"
    reverted = next(r for r in first.records if r.phase is Phase.REVERTED)
    synced = next(r for r in first.records if r.phase is Phase.REVERT_SYNCED)
    assert synced.at - reverted.at > 60.0, "synced once the candidate's pods went"
    assert CRASH not in retry.plan.firing, "the retry's checkpoint: the cluster without them"


@pytest.mark.integration
def test_a_crash_loop_outlasting_the_sync_timeout_is_in_the_retry_s_checkpoint(
    tmp_path: Path,
) -> None:
    """The revert is judged at the sync timeout with the candidate's pods still there; the
    retry's checkpoint has their crash loop (read when planned) and the incident's image
    pull (hidden by them this instant: a fix cannot cause the fault it fixes)."""
    loop, cluster, file, original = _run(tmp_path, linger_s=SYNC_TIMEOUT_S + 120.0)
    first, retry = _reverted_then_committed(loop, file, original)
    assert cluster.lingered
    reverted = next(r for r in first.records if r.phase is Phase.REVERTED)
    synced = next(r for r in first.records if r.phase is Phase.REVERT_SYNCED)
    assert synced.at - reverted.at >= SYNC_TIMEOUT_S
    assert CRASH not in first.plan.firing and PULL in first.plan.firing
    assert {CRASH, PULL} <= set(retry.plan.firing)
