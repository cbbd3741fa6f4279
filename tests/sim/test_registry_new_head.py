"""A sim that runs for long (``serve``) deploys commits pushed after it started: the images
those commits name elsewhere in the repository exist, as they did for a sim started later.
Fake clock, real commits."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.clock import FakeClock
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.engine import GitSource
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.registry import known_images
from gitmedic.sim.runtime import Sim
from gitmedic.sim.stamps import EPOCH

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: "gcr.io/acme/web:{tag}"}}]}}
"""
RELEASE = "containers: [{{image: 'gcr.io/acme/web:{tag}'}}]\n"


def started(tmp_path: Path) -> tuple[Path, Sim]:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "release").mkdir()
    (repo / "app" / "web.yaml").write_text(WEB.format(tag="v1"))
    (repo / "release" / "web.yaml").write_text(RELEASE.format(tag="v1"))
    init_repo(repo)
    registry = known_images(repo, ["HEAD"], None, [":(top)app"])
    catalog = ImageCatalog(frozenset()).with_registry(registry)
    sim = Sim(GitSource(repo / "app", "shop"), catalog, FakeClock(EPOCH), namespace="shop")
    sim.run(120)
    return repo, sim


def web_waiting(sim: Sim) -> set[str]:
    reasons = set()
    for pod in sim.cluster.observe().pods:
        for status in pod.body["status"].get("containerStatuses", []):
            reasons.add(status["state"].get("waiting", {}).get("reason", "running"))
    return reasons


def test_an_image_released_after_the_sim_started_is_pulled(tmp_path: Path) -> None:
    repo, sim = started(tmp_path)
    assert web_waiting(sim) == {"running"}
    (repo / "release" / "web.yaml").write_text(RELEASE.format(tag="v2"))
    commit_all(repo, "release v2")
    (repo / "app" / "web.yaml").write_text(WEB.format(tag="v2"))
    commit_all(repo, "web: v2, the release")

    sim.run(300)

    assert web_waiting(sim) == {"running"}


def test_a_tag_no_commit_ever_named_still_fails_to_pull(tmp_path: Path) -> None:
    repo, sim = started(tmp_path)
    (repo / "app" / "web.yaml").write_text(WEB.format(tag="v2-typo"))
    commit_all(repo, "web: a tag nobody pushed")

    sim.run(300)

    assert web_waiting(sim) & {"ImagePullBackOff", "ErrImagePull"}
