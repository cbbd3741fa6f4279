"""The scale-out lever: every replica busy and nothing in Git explains the load -> more
replicas (or a higher HPA maxReplicas), within the configured ceiling and the nodes' CPU."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from gitmedic.bot.responder.levers import SCALE_OUT, Bounds
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.sim.faults.git import commit_all
from gitmedic.sim.load import Demand
from tests.responder.levers.world import World, boutique, edit_workload, running

FRONTEND = "frontend"
HPA = """---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: frontend
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: frontend}}
  minReplicas: 1
  maxReplicas: {high}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {target}}}}}
"""


def _saturated(world: World) -> Finding:
    return world.finding("workload-saturated", "workload-saturated", FRONTEND)


def _scaled_to(repo: Path, app: str, replicas: int) -> str:
    selector = "spec:\n  selector:\n    matchLabels:\n      app: frontend\n"
    return edit_workload(
        repo,
        app,
        FRONTEND,
        selector,
        selector.replace("spec:\n", f"spec:\n  replicas: {replicas}\n"),
        f"frontend: {replicas} replicas",
    )


def _with_hpa(repo: Path, app: str, high: int, target: int = 80) -> None:
    manifest = repo / app / "kubernetes-manifests.yaml"
    manifest.write_text(manifest.read_text() + HPA.format(high=high, target=target))
    commit_all(repo, "frontend: autoscaled")


def test_every_replica_busy_doubles_the_replicas(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"cpu-saturation:{FRONTEND}")

    fix = SCALE_OUT.propose(world.evidence(_saturated(world)))

    assert fix is not None and (fix.strategy, fix.playbook) == ("lever", "workload-saturated")
    (edit,) = fix.edits
    assert (edit.op, edit.path, edit.value) == (Op.INSERT, ("spec", "replicas"), 2)
    assert "1 -> 2 (x2, within the configured ceiling of 10 replicas)" in fix.diagnosis
    assert "server uses 200m of its 200m CPU limit" in fix.diagnosis


def test_the_configured_ceiling_bounds_the_scale_out_and_says_so(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    _scaled_to(repo, app, 4)
    world = running(repo, app, ns, f"cpu-saturation:{FRONTEND}")
    # the scale to 4 ran fine for a while: not a recent change
    evidence = dataclasses.replace(world.evidence(_saturated(world)), since=time.time() + 60)

    fix = SCALE_OUT.propose(dataclasses.replace(evidence, bounds=Bounds(max_replicas=6)))

    assert fix is not None
    (edit,) = fix.edits
    assert (edit.op, edit.path, edit.value) == (Op.SET, ("spec", "replicas"), 6)
    assert "4 -> 6 (bounded by the configured ceiling of 6 replicas)" in fix.diagnosis
    assert SCALE_OUT.propose(dataclasses.replace(evidence, bounds=Bounds(max_replicas=4))) is None


def test_a_recent_change_to_the_replicas_is_the_restores_to_judge(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    _scaled_to(repo, app, 2)
    world = running(repo, app, ns, f"cpu-saturation:{FRONTEND}")

    assert SCALE_OUT.propose(world.evidence(_saturated(world))) is None


def test_a_harmless_recent_commit_does_not_stop_the_scale_out(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    labels = "  labels:\n    app: frontend\nspec:"
    edit_workload(
        repo, app, FRONTEND, labels, labels.replace("spec:", "  tier: web\nspec:"), "tier"
    )
    world = running(repo, app, ns, f"cpu-saturation:{FRONTEND}")

    assert SCALE_OUT.propose(world.evidence(_saturated(world))) is not None


def test_an_hpa_at_its_maximum_gets_a_higher_max_replicas(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    _with_hpa(repo, app, high=2)
    world = running(repo, app, ns, f"cpu-saturation:{FRONTEND}")
    saturated = _saturated(world)
    assert saturated.params == {"container": "server", "hpa": "frontend", "at_max": True}

    fix = SCALE_OUT.propose(world.evidence(saturated))

    assert fix is not None
    (edit,) = fix.edits
    assert edit.resource.kind == "HorizontalPodAutoscaler"
    assert (edit.op, edit.path, edit.value) == (Op.SET, ("spec", "maxReplicas"), 4)
    assert "which owns Deployment/boutique/frontend's replicas, 2 -> 4" in fix.diagnosis


def test_an_hpa_below_its_maximum_scales_by_itself(tmp_path: Path) -> None:
    """Target 200 % of the 100m request (the 200m limit): 1000m of demand is 5 replicas at
    their limit, under a maximum of 10 the HPA can still reach."""
    repo, app, ns = boutique(tmp_path)
    _with_hpa(repo, app, high=10, target=200)
    world = running(repo, app, ns, "")
    world.cluster.sim.cluster.load(("Deployment", ns, FRONTEND), Demand("server", 1000))
    world.cluster.sim.run(30.0)
    saturated = _saturated(world)
    assert saturated.params["at_max"] is False

    assert SCALE_OUT.propose(world.evidence(saturated)) is None


def test_an_oom_kill_is_not_saturation(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, "memory-growth:cartservice")
    oom = world.finding("pod-crashloop", "oom-killed", "cartservice")

    assert SCALE_OUT.propose(world.evidence(oom)) is None
