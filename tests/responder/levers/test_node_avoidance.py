"""The avoid-node lever keeps pods off a NotReady node by a required node affinity; the lift
lever, once the node is Ready again, puts the template back exactly as it was."""

from __future__ import annotations

import time
from pathlib import Path

from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.levers import AVOID_NODE, LIFT_NODE_AVOIDANCE
from gitmedic.bot.responder.responder import Responder
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.sim.faults.git import commit_all
from tests.responder.levers.world import boutique, changed_lines, edit_workload, running

NODE = "sim-worker-3"  # cartservice's pod runs there
CART = "cartservice"


def test_pods_on_a_not_ready_node_get_a_node_anti_affinity(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"node-not-ready:{NODE}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CART)

    fix = AVOID_NODE.propose(world.evidence(unavailable))

    assert fix is not None and (fix.strategy, fix.playbook) == ("lever", "node-not-ready")
    assert [e.op for e in fix.edits] == [Op.INSERT, Op.INSERT]
    assert "KubeletNotReady" in fix.diagnosis and f"NotIn [{NODE}]" in fix.diagnosis
    (text,) = fix.contents.values()
    assert changed_lines(world.manifest.read_text(), text) == [
        "+      annotations:",
        f"+        gitmedic.io/avoid-node: {NODE}",
        "+      affinity:",
        "+        nodeAffinity:",
        "+          requiredDuringSchedulingIgnoredDuringExecution:",
        "+            nodeSelectorTerms:",
        "+            - matchExpressions:",
        "+              - key: kubernetes.io/hostname",
        "+                operator: NotIn",
        "+                values:",
        f"+                - {NODE}",
    ]


def test_pods_failing_on_a_ready_node_are_not_the_nodes_fault(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"memory-growth:{CART}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CART)

    assert AVOID_NODE.propose(world.evidence(unavailable)) is None


def test_a_recent_change_to_where_the_pods_go_is_the_bisects_to_judge(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    world = running(repo, app, ns, f"node-not-ready:{NODE}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CART)
    spec = "    spec:\n      serviceAccountName: cartservice\n"
    edit_workload(repo, app, CART, spec, spec + "      tolerations: []\n", "cart: tolerations")

    assert AVOID_NODE.propose(world.evidence(unavailable)) is None


def test_once_the_node_is_ready_again_the_avoidance_is_lifted_exactly(tmp_path: Path) -> None:
    repo, app, ns = boutique(tmp_path)
    original = (repo / app / "kubernetes-manifests.yaml").read_text()
    world = running(repo, app, ns, f"node-not-ready:{NODE}")
    avoid = AVOID_NODE.propose(
        world.evidence(world.finding("deployment-unavailable", "unavailable", CART))
    )
    assert avoid is not None
    for file, text in avoid.contents.items():
        (repo / file).write_text(text)
    commit_all(repo, "gitmedic: keep cartservice off sim-worker-3")
    world.cluster.sim.cluster.node_ready(NODE)
    world.cluster.sim.run(30.0)
    ready = world.finding("node-avoided-ready", "node-avoided-ready", CART)

    lift = LIFT_NODE_AVOIDANCE.propose(world.evidence(ready))

    assert lift is not None and lift.playbook == "node-ready-again"
    assert lift.commit is not None and lift.commit.subject.startswith("gitmedic: keep")
    (text,) = lift.contents.values()
    assert text == original


def test_with_no_lever_that_fits_the_escalation_names_the_not_ready_node(tmp_path: Path) -> None:
    """cartservice keeps to linux nodes by its own required node affinity, which the avoid
    lever does not merge into: the escalation still says where the pods are stuck."""
    repo, app, ns = boutique(tmp_path)
    spec = "    spec:\n      serviceAccountName: cartservice\n"
    own = (
        "      affinity:\n        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n            - matchExpressions:\n"
        "              - {key: kubernetes.io/os, operator: In, values: [linux]}\n"
    )
    edit_workload(repo, app, CART, spec, spec + own, "cart: linux nodes only")
    world = running(repo, app, ns, f"node-not-ready:{CART}")
    unavailable = world.finding("deployment-unavailable", "unavailable", CART)
    later = time.time() + 4 * 86400  # the affinity ran fine for days: not a recent change
    incident = Incident("i-1", app, later, (unavailable,), live=world.cluster.snapshot())

    proposal = Responder(ManifestRepo(repo, app, ns)).propose(incident)

    assert proposal.strategy == "escalate" and proposal.escalation is not None
    assert f"{CART} sit on NotReady node(s) sim-worker-" in proposal.escalation.reason
    assert "KubeletNotReady" in proposal.escalation.reason
