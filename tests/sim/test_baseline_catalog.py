"""The sim's image catalog from history: a revision known to have run well is the best evidence."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.history import baseline_catalog
from tests.conftest import DATA
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

ENTRY = '          command: ["/catalog", "--grpc"]\n'
IMAGE = "          image: ghcr.io/gitmedic/shop-catalog:2.0.1\n"


def test_a_healthy_revision_decides_what_a_workload_is_expected_to_run(tmp_path: Path) -> None:
    """A broken entrypoint was committed and reverted: the cluster runs the reverted state
    well, so the catalog must expect no command, not the one the broken commit tried."""
    repo = baseline_repo(tmp_path)
    catalog = repo / APP / "catalog.yaml"
    good = catalog.read_text()
    catalog.write_text(good.replace(IMAGE, IMAGE + ENTRY, 1))
    git(repo, "commit", "-qam", "catalog: a broken entrypoint")
    catalog.write_text(good)
    git(repo, "commit", "-qam", "Revert the broken entrypoint")
    where, head = repo / APP, git(repo, "rev-parse", "HEAD")
    current = load_desired(where, rev=head, namespace=NAMESPACE).snapshot
    key = (NAMESPACE, "catalog", "server")

    trusted = baseline_catalog(where, head, namespace=NAMESPACE, current=current, healthy=True)
    history = baseline_catalog(where, head, namespace=NAMESPACE, current=current)

    assert trusted.expected_command(*key) == ()
    assert history.expected_command(*key) == ("/catalog", "--grpc")  # newest earlier commit


PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
PROD_APP = """version: 1
apps:
  - {name: prod, path: charts/podinfo, namespace: prod,
     helm: {values: [values-prod.yaml], release: podinfo}}
"""


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_the_history_renders_a_chart_as_the_app_is_configured_now(tmp_path: Path) -> None:
    """The team's history predates ``.gitmedic/config.yaml``: its commits render the chart
    with the production values the app names today, not the chart's values.yaml alone
    (another environment: redis disabled, podinfo never started with its cache)."""
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    init_repo(repo)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(PROD_APP)
    commit_all(repo, "gitmedic init")
    prod = repo / "charts/podinfo/values-prod.yaml"
    prod.write_text(prod.read_text().replace("memory: 256Mi", "memory: 1Mi"))
    commit_all(repo, "prod: a small memory limit")
    where = repo / "charts/podinfo"
    current = load_desired(where, namespace="prod").snapshot

    catalog = baseline_catalog(where, None, namespace="prod", current=current)

    command = catalog.expected_command("prod", "podinfo", "podinfo") or ()
    assert "--cache-server=tcp://podinfo-redis:6379" in command
    assert catalog.has_image("redis:8.8.0") and not catalog.has_image("redis:8.8.1")
