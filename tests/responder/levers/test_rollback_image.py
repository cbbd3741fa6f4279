"""The image-rollback lever: a container fails on an image no recent commit brought, and the
monitor saw another build run healthy there -> that image (by digest when the tag moved)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from gitmedic.bot.controller.healthy_images import healthy_containers
from gitmedic.bot.responder.levers import ROLLBACK_IMAGE, SeenHealthy
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.sim.faults.demand import inject_named
from tests.responder.levers.world import World, boutique, edit_workload, running

FRONTEND = "frontend"


def _retagged(tmp_path: Path) -> tuple[World, tuple[SeenHealthy, ...], str]:
    """online-boutique healthy (what the monitor notes), then frontend's tag pushed again."""
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, "")
    healthy = tuple(healthy_containers(world.cluster.snapshot()))
    inject_named(world.cluster.sim, f"image-retag:{FRONTEND}")
    world.cluster.sim.run(120.0)
    image = next(s.image for s in healthy if s.workload == FRONTEND)
    return world, healthy, image


def test_a_tag_pushed_again_is_pinned_to_the_build_that_ran_healthy(tmp_path: Path) -> None:
    world, healthy, image = _retagged(tmp_path)
    crash = world.finding("pod-crashloop", "crashloop", FRONTEND)
    good = next(s for s in healthy if s.workload == FRONTEND)

    fix = ROLLBACK_IMAGE.propose(dataclasses.replace(world.evidence(crash), healthy=healthy))

    assert fix is not None and (fix.strategy, fix.playbook) == ("lever", "image-ran-healthy")
    (edit,) = fix.edits
    assert edit.op is Op.SET and edit.path[-1] == "image"
    digest = good.image_id.split("@", 1)[1]
    assert edit.value == f"{image.rsplit(':', 1)[0]}@{digest}"
    assert f"the monitor last saw {image} (build {good.image_id})" in fix.diagnosis


def test_with_no_healthy_record_there_is_nothing_to_roll_back_to(tmp_path: Path) -> None:
    world, _, _ = _retagged(tmp_path)
    crash = world.finding("pod-crashloop", "crashloop", FRONTEND)

    assert ROLLBACK_IMAGE.propose(world.evidence(crash)) is None


def test_a_build_that_ran_healthy_and_fails_now_is_not_the_images_fault(tmp_path: Path) -> None:
    world, healthy, _ = _retagged(tmp_path)
    crash = world.finding("pod-crashloop", "crashloop", FRONTEND)
    pod = next(p for p in world.cluster.snapshot().of_kind("Pod") if p.name.startswith(FRONTEND))
    failing = str(pod.status["containerStatuses"][0]["imageID"])
    mine = next(s for s in healthy if s.workload == FRONTEND)
    same_build = (dataclasses.replace(mine, image_id=failing), *healthy)

    assert (
        ROLLBACK_IMAGE.propose(dataclasses.replace(world.evidence(crash), healthy=same_build))
        is None
    )


def _image_changed(tmp_path: Path) -> tuple[World, tuple[SeenHealthy, ...], str]:
    """frontend's image changed in Git to a tag the registry does not hold."""
    repo, app, ns = boutique(tmp_path)
    healthy = tuple(healthy_containers(running(repo, app, ns, "").cluster.snapshot()))
    image = next(s.image for s in healthy if s.workload == FRONTEND)
    edit_workload(repo, app, FRONTEND, image, image.rsplit(":", 1)[0] + ":v9.9.9", "frontend 9.9.9")
    return running(repo, app, ns, ""), healthy, image


def test_an_image_changed_long_ago_goes_back_to_the_one_that_ran_healthy(tmp_path: Path) -> None:
    world, healthy, image = _image_changed(tmp_path)
    pull = world.finding("pod-image-pull", "image-pull", FRONTEND)
    # the change is older than the window: it ran (elsewhere) for a while, Git shows no cause
    evidence = dataclasses.replace(world.evidence(pull), healthy=healthy, since=time.time() + 60)

    fix = ROLLBACK_IMAGE.propose(evidence)

    assert fix is not None
    (edit,) = fix.edits
    assert edit.value == image, "the image string that ran healthy, not a digest"


def test_a_recent_image_change_is_the_restores_to_judge(tmp_path: Path) -> None:
    world, healthy, _ = _image_changed(tmp_path)
    pull = world.finding("pod-image-pull", "image-pull", FRONTEND)

    assert (
        ROLLBACK_IMAGE.propose(dataclasses.replace(world.evidence(pull), healthy=healthy)) is None
    )
