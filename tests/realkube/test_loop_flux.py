"""``gitmedic run REPO --cluster kube --forge local --once`` with real Flux as the
engine, on the real control plane: a fault committed to main is detected through
the API server, fixed by a PR merged on the local forge, fetched by Flux from the
git server and applied at exactly the merge commit, verified and committed; a
candidate that makes things worse is reverted through the same path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from tests.realkube.boutique import wait_for
from tests.realkube.conftest import REALKUBE
from tests.realkube.flux import Flux
from tests.realkube.flux_app import APP, FluxApp, flux_app
from tests.realkube.gitops_app import (
    FILE,
    assert_release_undone,
    commit_fault,
    loop_report,
    push_release,
    reverted_then_committed,
    run_on_release,
)
from tests.realkube.kubelet import fake_kubelet, image_missing
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

pytestmark = REALKUBE
CATALOG = "productcatalogservice"


@pytest.fixture
def app(tier: Tier, flux: Flux, namespace: str, tmp_path: Path) -> Iterator[FluxApp]:
    yield flux_app(tier, flux, namespace, tmp_path)


def assert_deployed_at_main(app: FluxApp, pr: int) -> None:
    """Flux applied exactly the fix's merge commit and found it healthy; main is that
    commit, or it plus commits that change nothing Flux deploys (the memory PR that
    records the outcome), and Flux has applied main too."""
    merged = LocalForge(app.repo).get_pr(pr)
    assert merged.state.value == "merged" and merged.merge_sha
    revision = f"main@sha1:{merged.merge_sha}"
    wait_for(lambda: revision in app.healthy_revisions(), f"Flux's report on {revision}")
    assert git(app.repo, "diff", "--name-only", merged.merge_sha, "main", "--", APP) == ""
    app.wait_synced(app.head())
    applied = str(app.kustomization()["status"]["lastAppliedRevision"])
    assert applied == f"main@sha1:{app.head()}"


def catalog_endpoints(app: FluxApp) -> list[Any]:
    endpoints = app.tier.plane.get_json("endpoints", CATALOG, "-n", app.namespace)
    subsets = endpoints.get("subsets") or []
    assert isinstance(subsets, list)
    return [a for s in subsets for a in s.get("addresses") or []]


FAULTS = {
    # a selector typo: the Service selects no pod (the Endpoints are empty)
    "selector-typo": (
        "service-selector-mismatch",
        {"target": CATALOG, "label": "app", "value": "productcatalogservic"},
        "service-selector-unmatched",
    ),
    # a targetPort no container serves
    "target-port": ("service-target-port", {"target": CATALOG}, "service-target-port"),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_a_service_fault_on_main_is_fixed_synced_by_flux_and_committed(
    app: FluxApp, case: str
) -> None:
    fault, params, detector = FAULTS[case]
    healthy = git(app.repo, "show", f"main:{FILE}")
    sha, _ = commit_fault(app.repo, app.namespace, fault, **params)
    app.wait_applied(sha)

    report = loop_report(app.run_once())

    assert report["healthy"] is True
    (incident,) = report["incidents"]
    assert detector in {f["detector"] for f in incident["findings"]}
    (txn,) = incident["transactions"]
    assert (txn["status"], txn["attempt"], txn["tokens"]) == ("committed", 1, 0)
    assert git(app.repo, "show", f"main:{FILE}") == healthy, "the fix restores the file"
    assert_deployed_at_main(app, txn["pr"])
    wait_for(lambda: bool(catalog_endpoints(app)), "the catalog's Endpoints to fill again")


def test_a_kubelet_only_fault_is_seen_through_pod_status_and_fixed(app: FluxApp) -> None:
    sha, detail = commit_fault(app.repo, app.namespace, "bad-image", target="cartservice")
    missing = detail.rsplit(" -> ", 1)[1]
    with fake_kubelet(app.tier.plane, app.namespace, [image_missing({missing})]) as kubelet:
        app.wait_applied(sha)
        wait_for(lambda: bool(kubelet.reported), "the fake kubelet to report ImagePullBackOff")

        report = loop_report(app.run_once())

    assert report["healthy"] is True
    (incident,) = report["incidents"]
    assert "pod-image-pull" in {f["detector"] for f in incident["findings"]}
    (txn,) = incident["transactions"]
    assert txn["status"] == "committed"
    assert missing not in git(app.repo, "show", f"main:{FILE}")
    assert_deployed_at_main(app, txn["pr"])


def test_a_candidate_that_makes_things_worse_is_reverted_then_the_retry_commits(
    app: FluxApp,
) -> None:
    """A release as two commits: a new entrypoint, then a tag never pushed. Restoring
    the image alone crash-loops (the old image lacks the entrypoint): reverted, and
    the retry restores both."""
    release = push_release(app.repo, app.namespace, CATALOG)
    report = run_on_release(app, release)

    first, retry = reverted_then_committed(report)
    assert LocalForge(app.repo).get_pr(first["pr"]).state.value == "merged"
    assert_deployed_at_main(app, retry["pr"])
    assert_release_undone(app.repo, release)
