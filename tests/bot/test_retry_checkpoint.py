"""A retry's checkpoint is read when the retry is planned, not taken from the monitor.

On a real cluster the undone candidate's damage outlives its revert for a while:
the Deployment controller scales the candidate's crash-looping ReplicaSet down
on its next sync, later still on a loaded control plane (seen on the real
engines of tests/realkube). The revert is judged restored as soon as mu is back
at its checkpoint, and the retry is planned at once, before the monitor looks
at the cluster again. A checkpoint taken from the monitor's last reading (from
before the first attempt) had no crash loop in it, so the lingering pod was
"caused by the change, absent at the checkpoint" and failed the retry fast.

The sim scales a ReplicaSet whose pods cannot run down at once, so this cluster
keeps the last crash-looping pods (and their ReplicaSet) in its snapshots for
``LINGER_S`` after the sim dropped them, as a slow controller would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.loop.loop import Loop, LoopConfig
from gitmedic.bot.loop.sim_cluster import SimCluster
from gitmedic.bot.run_cmd import DEFAULT_POLICY
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.builtin.pod_crashloop import detect as crash_loops
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.transaction import Journal
from tests.bot.test_retry_extends import RELEASES, _release_in_two_commits
from tests.transaction.e2e_world import git

LINGER_S = 60.0  # longer than fail fast's streak (two polls 5 s apart), shorter than a window


class SlowScaleDown(SimCluster):
    """The sim, with crash-looping pods removed ``LINGER_S`` after the sim removed them."""

    def __init__(self, repo: Path, path: str, namespace: str, baseline_rev: str) -> None:
        super().__init__(repo, path, namespace, baseline_rev=baseline_rev)
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
        if now - self.gone_at > LINGER_S:
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


@pytest.mark.integration
def test_a_retry_is_not_failed_fast_on_the_undone_candidate_s_lingering_crash_loop(
    tmp_path: Path,
) -> None:
    world, releases = RELEASES["shop"]
    repo, path, namespace, file = world(tmp_path)
    original = file.read_bytes()
    _release_in_two_commits(repo, file.parent, *releases[0])
    healthy = git(repo, "rev-parse", "HEAD~2")
    cluster = SlowScaleDown(repo, path, namespace, baseline_rev=healthy)
    config = LoopConfig("shop", repo, path, namespace, policy=DEFAULT_POLICY)
    loop = Loop(config, cluster, LocalForge(repo), Journal(tmp_path / "j.sqlite"),
                list(builtin_registry()))  # fmt: skip

    healthy_at_end = loop.run_once()
    (report,) = loop.reports.values()
    outcomes = [(t.outcome.value, t.reason) for t in report.transactions]
    assert healthy_at_end is True, outcomes
    first, retry = report.transactions
    assert first.reason.startswith("failed fast: pod-crashloop"), first.reason
    assert cluster.lingered, "the undone candidate's pod outlived its revert"
    crash = f"pod-crashloop Deployment/{namespace}/catalog"
    assert crash not in first.plan.firing
    assert crash in retry.plan.firing, "the retry's checkpoint saw the lingering crash loop"
    assert [o for o, _ in outcomes] == ["reverted", "committed"], outcomes
    assert git(repo, "show", f"main:{file.relative_to(repo)}") + "\n" == original.decode()
