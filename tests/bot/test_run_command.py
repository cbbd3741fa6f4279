"""``gitmedic run --cluster sim --forge local --once --json`` on real apps with one fault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter
from tests.bot.run_world import REAL, app_repo, run_json, show, with_fault

pytestmark = pytest.mark.integration  # the whole loop, 5-15 s each

TXN_KEYS = {"pr", "branch", "status", "attempt", "strategy", "tokens", "mu_before", "mu_after"}


@pytest.mark.parametrize("name", sorted(REAL))
def test_an_a_class_fault_is_fixed_by_one_committed_transaction_restoring_the_value(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, app, namespace = app_repo(tmp_path, name)
    manifest = f"{app}/{Path(REAL[name][0]).name}"
    original = show(repo, "HEAD", manifest)
    with_fault(repo, app, namespace, "service-target-port", target=REAL[name][2])
    assert show(repo, "HEAD", manifest) != original

    code, out = run_json(repo, app, namespace, capsys)

    assert code == 0 and out["healthy"] is True
    (incident,) = out["incidents"]
    assert set(incident) == {"id", "findings", "transactions"}
    assert {f["detector"] for f in incident["findings"]} >= {"service-target-port"}
    (txn,) = incident["transactions"]
    assert set(txn) == TXN_KEYS
    assert txn["status"] == "committed" and txn["attempt"] == 1 and txn["tokens"] == 0
    assert txn["strategy"] in ("playbook", "bisect")
    assert txn["mu_before"] > 0 and txn["mu_after"] == 0
    assert show(repo, "main", manifest) == original, "the fix restores the original bytes"
    fix = LocalForge(repo).get_pr(txn["pr"])
    assert fix.state.value == "merged" and fix.branch == txn["branch"]


def test_a_healthy_repo_exits_0_with_no_incident(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    code, out = run_json(repo, app, namespace, capsys)
    assert (code, out) == (0, {"healthy": True, "incidents": []})


def test_a_runtime_only_fault_is_escalated_with_no_pull_request(tmp_path: Path) -> None:
    from gitmedic.bot.controller.loop import Loop, LoopConfig
    from gitmedic.bot.controller.sim_cluster import SimCluster
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.config import DEFAULT_POLICY
    from gitmedic.reconciler.transaction import Journal
    from gitmedic.sim.faults.runtime import database_auth_revoked

    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    cluster = SimCluster(repo, app, namespace)
    database_auth_revoked(cluster.sim, "productcatalogservice")
    config = LoopConfig("boutique", repo, app, namespace, policy=DEFAULT_POLICY)
    forge = LocalForge(repo)
    loop = Loop(config, cluster, forge, Journal(tmp_path / "j.sqlite"), list(builtin_registry()))

    assert loop.run_once() is False
    (report,) = loop.reports.values()
    assert report.transactions == [] and report.escalated.startswith("issue #")
    assert {f.detector for f in report.incident.findings} == {"alerts"}
    assert forge.list_prs(PrFilter.ALL) == ()
    issue = forge.get_issue(int(report.escalated.removeprefix("issue #")))
    assert "no pull request" in issue.body and "productcatalogservice" in issue.body


def test_a_fault_beyond_the_attempts_ends_failed_with_every_merge_reverted(
    tmp_path: Path,
) -> None:
    """catalog moves to an image that was never pushed together with a new entrypoint:
    restoring the image alone crash-loops (the old image lacks that entrypoint), so the
    fix is undone and the revert restores the incident's state. The fix that works (the
    whole container restored) needs a second attempt; with one attempt allowed the loop
    stops there, unhealthy, and main holds no merge that is not reverted (the demo's
    story (b) shows the second attempt committing)."""
    from gitmedic.bot.controller.loop import Loop, LoopConfig
    from gitmedic.bot.controller.report import txn_json
    from gitmedic.bot.controller.sim_cluster import SimCluster
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.config import DEFAULT_POLICY
    from gitmedic.reconciler.transaction import Journal
    from tests.transaction.e2e_world import APP, EXAMPLE, NAMESPACE, git

    repo = tmp_path / "manifests"
    shutil.copytree(EXAMPLE, repo / APP)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "shop: baseline")
    cluster = SimCluster(repo, APP, NAMESPACE)
    catalog = repo / APP / "catalog.yaml"
    image = "image: ghcr.io/gitmedic/shop-catalog:2.0.1\n"
    new = 'image: ghcr.io/gitmedic/shop-catalog:2.1.0\n          command: ["/catalog", "--grpc"]\n'
    catalog.write_text(catalog.read_text().replace(image, new, 1))
    git(repo, "commit", "-qam", "catalog: 2.1.0 with its new entrypoint")
    fault = git(repo, "rev-parse", "HEAD")
    forge = LocalForge(repo)
    config = LoopConfig("shop", repo, APP, NAMESPACE, attempts=1, policy=DEFAULT_POLICY)
    loop = Loop(config, cluster, forge, Journal(tmp_path / "j.sqlite"), list(builtin_registry()))

    assert loop.run_once() is False
    (report,) = loop.reports.values()
    assert report.transactions and report.resolved_at is None
    statuses = [txn_json(t)["status"] for t in report.transactions]
    assert statuses == ["reverted"]
    merged = [pr for pr in forge.list_prs(PrFilter.ALL) if pr.state.value == "merged"]
    fixes = [pr for pr in merged if not pr.title.startswith("Revert")]
    reverted = {t.pr for t in report.transactions if t.revert_merge_sha}
    assert fixes and {pr.number for pr in fixes} <= reverted
    assert git(repo, "diff", fault, "main", "--", APP) == "", "main is back at the fault"
    issue = forge.get_issue(int(report.escalated.removeprefix("issue #")))
    assert "all 1 attempt(s) were undone" in issue.body, "a person is told, with the reason"
