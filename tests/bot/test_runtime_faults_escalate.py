"""B-class faults no lever mitigates are escalated with no PR, and the issue's reason names
the injected cause (the oracles' first failure on the way), not a healthy neighbour."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter
from tests.bot.run_world import app_repo

pytestmark = pytest.mark.integration  # the whole loop (run_once)

CASES = {
    "database-auth-revoked": "authentication failed: the database user was dropped",
    "cache-password-changed": "NOAUTH Authentication required (password changed in the pod)",
    "network-loss": "chaos: 50 % packet loss",
    "poison-records": "a poison record fails some requests",
    "traffic-flood": "a traffic flood saturates the service",
}


@pytest.mark.parametrize("fault", sorted(CASES))
def test_a_runtime_fault_with_no_lever_is_escalated_naming_its_cause(
    tmp_path: Path, fault: str
) -> None:
    from gitmedic.bot.controller.loop import Loop, LoopConfig
    from gitmedic.bot.controller.sim_cluster import SimCluster
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.config import DEFAULT_POLICY
    from gitmedic.reconciler.transaction import Journal
    from gitmedic.sim.faults.demand import inject_named

    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    cluster = SimCluster(repo, app, namespace)
    inject_named(cluster.sim, f"{fault}:productcatalogservice")
    config = LoopConfig("boutique", repo, app, namespace, policy=DEFAULT_POLICY)
    forge = LocalForge(repo)
    loop = Loop(config, cluster, forge, Journal(tmp_path / "j.sqlite"), list(builtin_registry()))

    assert loop.run_once() is False
    (report,) = loop.reports.values()
    assert report.transactions == [] and forge.list_prs(PrFilter.ALL) == ()
    body = forge.get_issue(int(report.escalated.removeprefix("issue #"))).body
    why = body.split("**Why gitmedic stopped:**", 1)[1].split("## What was tried", 1)[0]
    assert f"productcatalogservice: {CASES[fault]}" in why, why
    assert "no runtime lever applies" in why
