"""The sim's image catalog from history: a revision known to have run well is the best evidence."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.history import baseline_catalog
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
