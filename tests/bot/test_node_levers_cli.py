"""Keeping pods off a NotReady node, and letting them back, through the real ``gitmedic``.

The sim of the first process has node sim-worker-3 NotReady (``GITMEDIC_SIM_FAULTS``):
the four workloads bound to it stop serving. Under a policy that allows levers, one
PR gives each a required node affinity ``NotIn [sim-worker-3]`` and it ends healthy.
The next process's node is Ready again: the ``node-avoided-ready`` findings open an
incident of their own, and a follow-up PR (a transaction like any fix) puts the
manifests back exactly as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from tests.bot.cli_world import configured_repo, git, prs, run_once
from tests.bot.test_runtime_levers_cli import LEVERS_ALLOWED, MANIFEST, lever_run

pytestmark = pytest.mark.integration
NODE = "sim-worker-3"
ON_IT = ("adservice", "cartservice", "checkoutservice", "currencyservice")


def test_pods_leave_a_not_ready_node_and_come_back_by_a_follow_up_pr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, LEVERS_ALLOWED)
    before = git(repo, "show", f"HEAD:{MANIFEST}")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", f"node-not-ready:{NODE}")

    incident, txn = lever_run(repo, 0, "committed")

    assert txn["mu_before"] > 0 and txn["mu_after"] == 0
    body = LocalForge(repo).get_pr(txn["pr"]).body
    assert "avoid-node" in body and f"kubernetes.io/hostname NotIn [{NODE}]" in body
    avoided = git(repo, "show", f"main:{MANIFEST}")
    assert avoided.count(f"gitmedic.io/avoid-node: {NODE}") == len(ON_IT)

    monkeypatch.delenv("GITMEDIC_SIM_FAULTS")
    again = run_once(repo)

    assert again.rc == 0 and "Traceback" not in again.err, again.err
    # the first incident is carried on (its fix committed: resolved), the follow-up is new
    incidents = {i["id"]: i for i in again.json()["incidents"]}
    (follow_up,) = [i for i in incidents.values() if i["id"] != incident["id"]]
    assert {f["detector"] for f in follow_up["findings"]} == {"node-avoided-ready"}
    (lift, *_) = follow_up["transactions"]
    assert (lift["status"], lift["strategy"]) == ("committed", "lever")
    assert "lift-node-avoidance" in LocalForge(repo).get_pr(lift["pr"]).body
    assert git(repo, "show", f"main:{MANIFEST}") == before, "exactly as before the avoidance"
    merged = {p["number"] for p in prs(repo) if p["state"] == "merged"}
    assert {txn["pr"], lift["pr"]} <= merged
