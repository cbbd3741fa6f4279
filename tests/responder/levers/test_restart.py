"""The restart lever: wedged pods with no config change get a restart annotation on the pod
template (byte-exact, like ``kubectl rollout restart``); anything else is not a wedge."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from gitmedic.bot.responder.levers import LEVERS, RAISE_MEMORY_LIMIT, RESTART, lever_fix, registry
from gitmedic.reconciler.manifests.edit import Op
from tests.responder.levers.world import boutique, debug_env, running

CATALOG = "productcatalogservice"


def test_wedged_pods_get_a_restart_annotation_and_nothing_else(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"wedge:{CATALOG}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CATALOG)

    fix = RESTART.propose(world.evidence(unavailable))

    assert fix is not None and fix.strategy == "lever" and fix.playbook == "pod-wedged"
    (edit,) = fix.edits
    assert edit.op is Op.INSERT and edit.path == ("spec", "template", "metadata", "annotations")
    (stamp,) = edit.value.values()
    assert edit.value == {"gitmedic.io/restartedAt": stamp} and stamp.endswith("Z")
    before, after = world.manifest.read_text(), fix.contents[edit.file]
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["+      annotations:", f'+        gitmedic.io/restartedAt: "{stamp}"']
    assert "kubectl rollout restart" in fix.diagnosis and "wedged" in fix.diagnosis


def test_a_recent_change_to_the_workload_is_not_a_wedge_to_restart(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"wedge:{CATALOG}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CATALOG)
    debug_env(repo, app, CATALOG)

    assert RESTART.propose(world.evidence(unavailable)) is None


def test_pods_still_within_their_start_up_time_are_not_wedged(tmp_path: Path) -> None:
    """productcatalogservice's readiness probe gives it 3 x 10 s (the API's defaults) to
    become Ready: un-Ready for 20 s is starting, for 35 s wedged."""
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"wedge:{CATALOG}", settle_s=20.0)
    unavailable = world.finding("deployment-unavailable", "unavailable", CATALOG)

    assert RESTART.propose(world.evidence(unavailable)) is None
    world.cluster.sim.run(15.0)
    assert RESTART.propose(world.evidence(unavailable)) is not None


def test_a_crash_loop_is_not_a_wedge(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, "memory-growth:cartservice")
    unavailable = world.finding("deployment-unavailable", "unavailable", "cartservice")

    assert RESTART.propose(world.evidence(unavailable)) is None


def test_a_lever_whose_playbook_was_set_aside_is_not_asked(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"wedge:{CATALOG}")
    evidence = world.evidence(world.finding("deployment-unavailable", "unavailable", CATALOG))

    assert lever_fix(evidence, {"pod-wedged"}) is not None
    assert lever_fix(evidence, {"memory-working-set-grew"}) is None


def test_the_registry_refuses_a_lever_twice() -> None:
    assert [lever.id for lever in LEVERS] == [
        "raise-memory-limit",
        "restart",
        "scale-out",
        "rollback-image",
        "avoid-node",
        "lift-node-avoidance",
    ]
    with pytest.raises(ValueError, match="'restart' is registered twice"):
        registry((RESTART, RAISE_MEMORY_LIMIT, RESTART))
