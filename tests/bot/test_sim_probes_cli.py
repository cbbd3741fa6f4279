"""``run --cluster sim`` honours the configured probes, latency limits included.

The probe names the app's real URL; the sim answers it from its traffic model.
A Service that refuses its callers' port makes the frontend probe fail before
the fix (so it weighs in mu before) and pass after; the PR body's non-regression
plan names it with its limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import configured_repo, run_once, target_port_fault

pytestmark = pytest.mark.integration

PROBE = "http://frontend.boutique.svc.cluster.local/"
ORACLES = f"    oracles: {{probes: [{{url: '{PROBE}', max_latency_ms: 400}}]}}\n"


def test_the_configured_probe_is_measured_on_the_sim_and_named_in_the_plan(
    tmp_path: Path,
) -> None:
    repo, app, namespace = configured_repo(tmp_path, "")
    config = repo / ".gitmedic" / "config.yaml"
    config.write_text(config.read_text() + ORACLES)
    commit_all(repo, "gitmedic: probe the shop's frontend")
    target_port_fault(repo, app, namespace)

    done = run_once(repo)

    assert done.rc == 0, done.err
    (incident,) = done.json()["incidents"]
    (txn,) = incident["transactions"]
    assert txn["status"] == "committed"
    assert txn["mu_before"] > 0 and txn["mu_after"] == 0
    body = LocalForge(repo).get_pr(txn["pr"]).body
    plan = (
        f"HTTP probe GET {PROBE} (the simulator's traffic): answers 2xx or 3xx within 400 ms "
        "unless it failed before"
    )
    assert plan in body
    # measured at the checkpoint: failing before the fix, so it weighed in mu before
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    (state,) = [t for t in journal.transactions() if t.plan.txn_id.endswith("/attempt-1")]
    assert state.plan.baselines.get(plan) == {f"probe {PROBE} failing": 1}, state.plan.baselines
