"""The raise-memory-limit lever: an OOM kill nothing in Git explains gets a bounded,
byte-exact raise of the container's limit; a recent change that may explain it does not."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.responder.levers import RAISE_MEMORY_LIMIT, Bounds
from gitmedic.detectors.quantity import MI
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.sim.faults.git import commit_all
from tests.responder.levers.world import boutique, changed_lines, debug_env, edit_workload, running

CART = "cartservice"


def test_an_oom_with_a_harmless_env_commit_doubles_the_limit_in_one_line(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    debug_env(repo, app, CART)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    oom = world.finding("pod-crashloop", "oom-killed", CART)

    fix = RAISE_MEMORY_LIMIT.propose(world.evidence(oom))

    assert fix is not None and fix.strategy == "lever"
    assert fix.playbook == "memory-working-set-grew"
    (edit,) = fix.edits
    assert edit.op is Op.SET and edit.value == "256Mi"
    assert edit.path[-3:] == ("resources", "limits", "memory")
    before = world.manifest.read_text()
    after = fix.contents[edit.file]
    one_line = ["-            memory: 128Mi", "+            memory: 256Mi"]
    assert changed_lines(before, after) == one_line
    assert "128Mi -> 256Mi" in fix.diagnosis and "the configured ceiling 8192Mi" in fix.diagnosis


def test_the_raise_stops_at_the_quota_and_the_body_names_it(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    oom = world.finding("pod-crashloop", "oom-killed", CART)
    used = _limits_in_namespace(world)
    quota = (
        "---\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: memory\n"
        f"spec:\n  hard:\n    limits.memory: {(used + 32 * MI) // MI}Mi\n"
    )
    world.manifest.write_text(world.manifest.read_text() + quota)
    commit_all(repo, "quota for the namespace")

    fix = RAISE_MEMORY_LIMIT.propose(world.evidence(oom))

    assert fix is not None and fix.edits[0].value == "160Mi", "128Mi + the 32Mi left"
    assert "bounded by the ResourceQuota's limits.memory (32Mi free)" in fix.diagnosis


def test_the_raise_stops_at_the_configured_ceiling(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    oom = world.finding("pod-crashloop", "oom-killed", CART)

    fix = RAISE_MEMORY_LIMIT.propose(world.evidence(oom, Bounds(memory_ceiling=200 * MI)))

    assert fix is not None and fix.edits[0].value == "200Mi"
    assert "bounded by the configured ceiling 200Mi" in fix.diagnosis


def test_no_room_above_the_limit_is_no_lever(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    oom = world.finding("pod-crashloop", "oom-killed", CART)

    assert RAISE_MEMORY_LIMIT.propose(world.evidence(oom, Bounds(memory_ceiling=128 * MI))) is None


def test_a_recent_image_change_is_left_to_the_bisect(tmp_path: Path) -> None:
    """A new release may be why the container needs more memory: not this lever's call."""
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    oom = world.finding("pod-crashloop", "oom-killed", CART)
    assert RAISE_MEMORY_LIMIT.propose(world.evidence(oom)) is not None
    # the same kills, with a release in the recent history (the history is what is judged)
    edit_workload(repo, app, CART, "cartservice:v0.10.6", "cartservice:v0.10.7", "cart: 0.10.7")

    assert RAISE_MEMORY_LIMIT.propose(world.evidence(oom)) is None


def test_a_crash_that_is_not_an_oom_kill_is_not_this_lever(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"wedge:{CART}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CART)

    assert RAISE_MEMORY_LIMIT.propose(world.evidence(unavailable)) is None


def _limits_in_namespace(world: object) -> int:
    from gitmedic.detectors.quantity import whole_bytes
    from gitmedic.detectors.snapshot import mapping

    desired = world.cluster.sim.cluster.desired  # type: ignore[attr-defined]
    total = 0
    for wl in desired.workloads():
        for c in wl.containers():
            limits = mapping(mapping(c.body.get("resources")).get("limits"))
            total += (wl.replicas or 1) * (whole_bytes(limits.get("memory")) or 0)
    return total
