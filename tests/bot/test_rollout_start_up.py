"""No incident during a healthy rollout; one once the rollout is past its progress deadline.

sock-shop's ``catalogue`` waits 180 s before its first readiness probe. Moved
to the ``Recreate`` strategy with a new pod label, its rollout takes it down for
those minutes: its Service has no ready endpoint. Within the Deployment's
progress deadline that is start-up, held back; past it, an incident. All on the
sim's fake clock.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.faults import BENIGN
from gitmedic.sim.faults import edit as ed
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.faults.targets import workload
from tests.conftest import APPS

pytestmark = pytest.mark.integration  # the whole loop through a 400 s rollout

NAMESPACE = "sock-shop"
APP = "apps/sock-shop"
SLOW = "catalogue"


def sock_shop(tmp: Path) -> Path:
    repo = tmp / "repo"
    target = repo / APP / "complete-demo.yaml"
    target.parent.mkdir(parents=True)
    shutil.copy(APPS / "sock-shop" / "deploy/kubernetes/complete-demo.yaml", target)
    init_repo(repo)
    return repo


def recreate_catalogue(repo: Path, deadline_s: int | None) -> None:
    """A benign commit that takes catalogue down while its new pod starts (Recreate)."""
    snap = load_desired(repo / APP, namespace=NAMESPACE).snapshot
    catalogue = workload(snap, "catalogue")

    def change(doc: Any) -> None:
        doc["spec"]["strategy"] = {"type": "Recreate"}
        if deadline_s is not None:
            doc["spec"]["progressDeadlineSeconds"] = deadline_s

    ed.edit(repo, catalogue.obj, change)
    BENIGN["pod-label"](repo, load_desired(repo / APP, namespace=NAMESPACE).snapshot, "catalogue")
    commit_all(repo, "catalogue: recreate on rollout, label its pods")


def watch(tmp: Path, deadline_s: int | None, seconds: float) -> tuple[Loop, set[str], float]:
    """The loop over a settled sock-shop while the catalogue commit rolls out: the loop, the
    findings it held back as start-up ("detector resource") and when the commit landed."""
    repo = sock_shop(tmp)
    cluster = SimCluster(repo, APP, NAMESPACE)
    recreate_catalogue(repo, deadline_s)
    landed = cluster.clock.now()
    config = LoopConfig("sock-shop", repo, APP, NAMESPACE, policy=DEFAULT_POLICY)
    journal = Journal(tmp / "j.sqlite")
    loop = Loop(config, cluster, LocalForge(repo), journal, list(builtin_registry()))
    held: set[str] = set()
    end = cluster.clock.now() + seconds
    while cluster.clock.now() < end and not loop.incidents.open:
        loop.tick()
        held |= {f"{f.detector} {f.resource}" for f in loop.monitor.held}
    return loop, held, landed


def test_a_slow_starter_rolling_out_within_its_deadline_opens_no_incident(
    tmp_path: Path,
) -> None:
    loop, held, _ = watch(tmp_path, None, 400.0)  # the default deadline: 600 s

    assert held == {"service-no-endpoints Service/sock-shop/catalogue"}
    assert not loop.incidents.open and loop.journal.incidents("sock-shop") == []
    assert loop.healthy, "catalogue came up: nothing is held any more"
    assert loop.monitor.held == ()


@pytest.mark.parametrize("deadline_s", [60, 120])
def test_the_same_rollout_past_its_progress_deadline_opens_an_incident(
    tmp_path: Path, deadline_s: int
) -> None:
    loop, held, landed = watch(tmp_path, deadline_s, 175.0)  # catalogue is Ready after 180 s

    (incident,) = loop.incidents.open.values()
    found = {(f.detector, f.rule, str(f.resource)) for f in incident.findings}
    past = (
        "deployment-unavailable",
        "progress-deadline-exceeded",
        "Deployment/sock-shop/catalogue",
    )
    assert past in found
    assert "service-no-endpoints Service/sock-shop/catalogue" in held, "held until then"
    assert incident.opened_at > landed + deadline_s
