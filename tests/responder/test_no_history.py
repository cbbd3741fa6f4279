"""Faults with no history: present since the app's first commit, so nothing to bisect.

Where the evidence determines one value the fix sets it (a targetPort to the one port
the selected containers serve, a probe to the port its container declares, a selector
to the labels of the workload the Service's name names) and merges like any restore.
Where several values fit, one is proposed with the others listed, and the policy holds
the PR for a person whatever the rules say.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from gitmedic.bot.policy.decide import decide
from gitmedic.bot.responder.responder import Responder
from gitmedic.bot.transactions.fix import change_summary
from gitmedic.detectors import Resource
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import AppRepo, Touch, add, incident_of, ins, set_

B = "online-boutique"
SRV = "spec.template.spec.containers[name=server]."
BACKEND = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "backend-api"},
    "spec": {"selector": {"tier": "backend", "app": "gone"}, "ports": [{"port": 8080}]},
}
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def born_with(app: AppRepo, *touches: Touch) -> None:
    """``touches`` folded into the app's first commit: the fault has no history."""
    root = app.git.run("rev-list", "--max-parents=0", "HEAD").stdout.strip()
    app.commit("fault", *touches)
    app.git.run("reset", "--soft", root)
    app.git.run("commit", "--amend", "-m", "baseline: upstream manifests")
    assert app.git.run("rev-list", "--count", "HEAD").stdout.strip() == "1"


def _propose(app: AppRepo, detector: str):  # type: ignore[no-untyped-def]
    found = [f for f in app.findings() if f.detector == detector]
    assert found, detector
    incident = incident_of(app.repo.path, found, time.time(), None)
    proposal = Responder(app.repo, completion=no_llm).propose(incident)
    return proposal, decide(change_summary(proposal, incident), DEFAULT_POLICY, NOW)


def _value(app: AppRepo, kind: str, name: str, path: str) -> Any:
    ref = Resource(kind, app.repo.namespace, name)
    return app.repo.value_at(app.repo.locate(ref), ref, parse_path(path))[1]


def test_a_target_port_goes_to_the_one_port_the_selected_containers_serve(
    make_app: MakeApp,
) -> None:
    app = make_app(B)
    born_with(
        app, Touch("Service", "cartservice", (set_("spec.ports[name=grpc].targetPort", 9999),))
    )
    proposal, decision = _propose(app, "service-target-port")
    assert (proposal.strategy, proposal.commit, proposal.alternatives) == ("playbook", None, ())
    assert "the evidence determines one" in proposal.diagnosis
    assert decision.auto_merge is True
    app.repo.apply(proposal.edits)
    assert _value(app, "Service", "cartservice", "spec.ports[name=grpc].targetPort") == 7070


def test_two_served_ports_are_proposed_for_a_person_with_the_alternative(
    make_app: MakeApp,
) -> None:
    app = make_app(B)
    metrics = {"name": "metrics", "containerPort": 9464}
    born_with(
        app,
        Touch("Service", "cartservice", (set_("spec.ports[name=grpc].targetPort", 9999),)),
        Touch("Deployment", "cartservice", (ins(f"{SRV}ports[1]", metrics),)),
    )
    proposal, decision = _propose(app, "service-target-port")
    assert proposal.strategy == "playbook" and proposal.commit is None
    assert proposal.alternatives == ("9464 (served by container server)",)
    assert "Alternatives: 9464" in proposal.diagnosis and "A person chooses" in proposal.diagnosis
    assert decision.auto_merge is False and decision.risk == "medium"
    assert "a person chooses" in decision.reason
    app.repo.apply(proposal.edits)  # the port of the Service port's name comes first
    assert _value(app, "Service", "cartservice", "spec.ports[name=grpc].targetPort") == 7070


def test_a_probe_goes_to_the_port_its_container_declares(make_app: MakeApp) -> None:
    app = make_app(B)
    born_with(
        app, Touch("Deployment", "cartservice", (set_(f"{SRV}livenessProbe.grpc.port", 7071),))
    )
    proposal, decision = _propose(app, "probe-port")
    assert (proposal.commit, proposal.alternatives) == (None, ())
    assert decision.auto_merge is True
    app.repo.apply(proposal.edits)
    assert _value(app, "Deployment", "cartservice", f"{SRV}livenessProbe.grpc.port") == 7070


def test_a_selector_goes_to_the_labels_of_the_workload_its_name_names(
    make_app: MakeApp,
) -> None:
    app = make_app(B)
    born_with(app, Touch("Service", "cartservice", (set_("spec.selector.app", "cart"),)))
    proposal, _ = _propose(app, "service-selector-unmatched")
    assert (proposal.commit, proposal.alternatives) == (None, ())
    assert "named by the Service" in proposal.diagnosis
    app.repo.apply(proposal.edits)
    assert _value(app, "Service", "cartservice", "spec.selector") == {"app": "cartservice"}


def test_a_selector_naming_no_workload_is_proposed_with_every_closest_one(
    make_app: MakeApp,
) -> None:
    """``tier: backend`` is shared by two workloads and the Service's name names neither."""
    app = make_app(B)
    tier = ins("spec.template.metadata.labels.tier", "backend")
    born_with(
        app,
        Touch("Deployment", "emailservice", (tier,)),
        Touch("Deployment", "recommendationservice", (tier,)),
        Touch("Service", "backend-api", (add(BACKEND),)),
    )
    proposal, decision = _propose(app, "service-selector-unmatched")
    assert proposal.commit is None and len(proposal.alternatives) == 1
    assert decision.auto_merge is False
    assert "sharing the most selector labels" in proposal.diagnosis
