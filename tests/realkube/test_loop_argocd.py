"""``gitmedic run REPO --cluster kube --forge local --once`` with real Argo CD as the
engine, watched through Argo CD's REST API (``engine.kind: argocd``: the real API
server runs here, so the REST watcher meets it rather than the Application custom
resource): a fault committed to main is detected through the Kubernetes API, fixed
by a PR merged on the local forge, synced by Argo CD from the git server at
exactly the merge commit (its own sync history says so), verified and committed;
a candidate that makes things worse is reverted through the same path; a token
Argo CD refuses stops the command before it touches anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrFilter
from tests.realkube.argocd import ArgoCD
from tests.realkube.argocd_app import ArgoApp, argo_app, undeployed_app
from tests.realkube.boutique import wait_for
from tests.realkube.conftest import REALKUBE
from tests.realkube.flux import Flux
from tests.realkube.gitops_app import (
    FILE,
    assert_release_undone,
    commit_fault,
    loop_report,
    push_release,
    reverted_then_committed,
    run_on_release,
)
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

pytestmark = REALKUBE
CATALOG = "productcatalogservice"


@pytest.fixture
def app(
    tier: Tier, argocd: ArgoCD, flux: Flux, namespace: str, tmp_path: Path
) -> Iterator[ArgoApp]:
    try:
        yield argo_app(tier, argocd, flux, namespace, tmp_path)
    finally:
        argocd.forget(namespace)


def assert_deployed_at_main(app: ArgoApp, pr: int) -> None:
    """Argo CD synced exactly the fix's merge commit (a sync in its history); main is
    that commit, or it plus commits that change nothing Argo CD deploys (the memory
    PR), and Argo CD reports main synced and healthy."""
    merged = LocalForge(app.repo).get_pr(pr)
    assert merged.state.value == "merged" and merged.merge_sha
    assert merged.merge_sha in app.deployed_revisions(), app.deployed_revisions()
    assert git(app.repo, "diff", "--name-only", merged.merge_sha, "main", "--", FILE) == ""

    def main_synced_and_healthy() -> bool:
        status = app.application().get("status", {})
        sync, health = status.get("sync", {}), status.get("health", {})
        return (sync.get("status"), sync.get("revision"), health.get("status")) == (
            "Synced",
            app.head(),
            "Healthy",
        )

    wait_for(main_synced_and_healthy, "Argo CD to report main synced and healthy")


def catalog_endpoints(app: ArgoApp) -> list[object]:
    endpoints = app.tier.plane.get_json("endpoints", CATALOG, "-n", app.namespace)
    subsets = endpoints.get("subsets") or []
    assert isinstance(subsets, list)
    return [a for s in subsets for a in s.get("addresses") or []]


def test_a_selector_typo_on_main_is_fixed_synced_by_argocd_and_committed(app: ArgoApp) -> None:
    healthy = git(app.repo, "show", f"main:{FILE}")
    params = {"target": CATALOG, "label": "app", "value": "productcatalogservic"}
    sha, _ = commit_fault(app.repo, app.namespace, "service-selector-mismatch", **params)
    app.wait_applied(sha)
    wait_for(lambda: not catalog_endpoints(app), "the catalog's Endpoints to empty")

    report = loop_report(app.run_once())

    assert report["healthy"] is True
    (incident,) = report["incidents"]
    assert "service-selector-unmatched" in {f["detector"] for f in incident["findings"]}
    (txn,) = incident["transactions"]
    assert (txn["status"], txn["attempt"], txn["tokens"]) == ("committed", 1, 0)
    assert git(app.repo, "show", f"main:{FILE}") == healthy, "the fix restores the file"
    assert_deployed_at_main(app, txn["pr"])
    wait_for(lambda: bool(catalog_endpoints(app)), "the catalog's Endpoints to fill again")


def test_a_candidate_that_makes_things_worse_is_reverted_then_the_retry_commits(
    app: ArgoApp,
) -> None:
    """A release as two commits: a new entrypoint, then a tag never pushed. Restoring
    the image alone crash-loops (the old image lacks the entrypoint): reverted, and
    the retry restores both."""
    release = push_release(app.repo, app.namespace, CATALOG)
    report = run_on_release(app, release)

    first, retry = reverted_then_committed(report)
    candidate = LocalForge(app.repo).get_pr(first["pr"])
    assert candidate.state.value == "merged" and candidate.merge_sha
    assert candidate.merge_sha in app.deployed_revisions(), "Argo CD synced the candidate"
    assert_deployed_at_main(app, retry["pr"])
    assert_release_undone(app.repo, release)


def test_a_token_argocd_refuses_stops_the_run_before_it_changes_anything(
    tier: Tier, argocd: ArgoCD, namespace: str, tmp_path: Path
) -> None:
    app = undeployed_app(tier, argocd, namespace, tmp_path)
    head = app.head()

    done = app.run_once(token="not-a-token-argocd-issued")

    assert done.returncode == 2, done.stderr[-2000:]
    assert "Argo CD refused the token (HTTP 401)" in done.stderr, done.stderr[-2000:]
    assert app.head() == head
    assert LocalForge(app.repo).list_prs(PrFilter.ALL) == ()
