"""Commit shapes from FAULTS.md: a fault with good changes in the same commit, two faults
in one commit and in two commits, benign commits, and a fault that needs an object an
earlier good commit added (an HPA)."""

from __future__ import annotations

import time

from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Resource
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import (
    POD,
    Touch,
    add,
    incident_of,
    ins,
    new_findings,
    rm,
    set_,
)

B = "online-boutique"
SRV = f"{POD}containers[name=server]."
TARGET_PORT = Touch("Service", "cartservice", (set_("spec.ports[name=grpc].targetPort", 9999),))
MEMORY = Touch("Deployment", "paymentservice", (set_(f"{SRV}resources.limits.memory", "10Mi"),))
GOOD = (
    Touch("Deployment", "frontend", (ins("metadata.labels.team", "web"),)),
    Touch("Deployment", "currencyservice", (ins("spec.replicas", 2, 0),)),
    Touch("Deployment", "adservice", (set_(f"{SRV}image", "example.com/adservice:v0.10.1"),)),
)


def propose(app, *touch_sets):  # type: ignore[no-untyped-def]
    before = app.findings()
    for i, touches in enumerate(touch_sets):
        app.commit(f"change {i}", *touches)
    new = new_findings(before, app.findings())
    incident = incident_of(app.repo.path, new, time.time(), None)
    return new, Responder(app.repo, completion=no_llm).propose(incident)


def value(app, kind, name, path):  # type: ignore[no-untyped-def]
    from gitmedic.detectors import Resource

    ref = Resource(kind, app.repo.namespace, name)
    return app.repo.value_at(app.repo.locate(ref), ref, parse_path(path))[1]


def test_only_the_fault_is_undone_and_the_good_changes_stay(make_app: MakeApp) -> None:
    app = make_app(B)
    _, proposal = propose(app, (TARGET_PORT, *GOOD))
    app.repo.apply(proposal.edits)
    assert value(app, "Service", "cartservice", "spec.ports[name=grpc].targetPort") == 7070
    assert value(app, "Deployment", "frontend", "metadata.labels.team") == "web"
    assert value(app, "Deployment", "currencyservice", "spec.replicas") == 2
    assert value(app, "Deployment", "adservice", f"{SRV}image") == "example.com/adservice:v0.10.1"


def test_a_good_change_to_the_same_object_stays(make_app: MakeApp) -> None:
    app = make_app("sock-shop")
    cat = f"{POD}containers[name=catalogue]."
    touches = (
        cat_touch := Touch(
            "Deployment",
            "catalogue",
            (
                set_(f"{cat}resources.limits.memory", "10Mi"),
                ins("metadata.labels.team", "shop"),
                set_(f"{cat}image", "weaveworksdemos/catalogue:0.3.6"),
            ),
        ),
    )
    assert cat_touch
    _, proposal = propose(app, touches)
    app.repo.apply(proposal.edits)
    assert value(app, "Deployment", "catalogue", f"{cat}resources.limits.memory") == "200Mi"
    assert value(app, "Deployment", "catalogue", "metadata.labels.team") == "shop"
    assert value(app, "Deployment", "catalogue", f"{cat}image").endswith("0.3.6")


def test_two_faults_in_one_commit_are_both_undone(make_app: MakeApp) -> None:
    app = make_app(B)
    original = app.files()
    new, proposal = propose(app, (TARGET_PORT, MEMORY))
    assert {f.detector for f in new} >= {"service-target-port", "memory-limit-too-small"}
    app.repo.apply(proposal.edits)
    assert app.files() == original


def test_two_faults_in_two_commits_are_both_undone(make_app: MakeApp) -> None:
    app = make_app(B)
    original = app.files()
    _, proposal = propose(app, (TARGET_PORT,), (MEMORY,))
    app.repo.apply(proposal.edits)
    assert app.files() == original
    assert proposal.commits_walked >= 2


def test_benign_commits_produce_no_finding(make_app: MakeApp) -> None:
    app = make_app(B)
    before = app.findings()
    app.commit("scale", Touch("Deployment", "cartservice", (ins("spec.replicas", 2, 0),)))
    app.commit("label", Touch("Service", "cartservice", (ins("metadata.labels.tier", "cache"),)))
    path = app.git.root / app.repo.path
    path.write_text(path.read_text() + "# reviewed by the platform team\n")
    app.git.commit("comment only", ".")
    assert new_findings(before, app.findings()) == []


def test_an_hpa_fault_after_the_hpa_was_added_is_undone(make_app: MakeApp) -> None:
    app = make_app(B)
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "emailservice"},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "emailservice",
            },
            "minReplicas": 1,
            "maxReplicas": 4,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
    }
    app.commit(
        "autoscale emailservice", Touch("HorizontalPodAutoscaler", "emailservice", (add(hpa),))
    )
    good = app.files()
    # Both go: without a request, Kubernetes takes the limit as the request.
    cpu = (rm(f"{SRV}resources.requests.cpu"), rm(f"{SRV}resources.limits.cpu"))
    fault = Touch("Deployment", "emailservice", cpu)
    new, proposal = propose(app, (fault,))
    assert [f.detector for f in new] == ["hpa-no-cpu-request"]
    app.repo.apply(proposal.edits)
    assert app.files() == good


def test_a_playbook_restores_the_whole_field_group_and_keeps_other_changes(
    make_app: MakeApp,
) -> None:
    """The playbook names ``spec.strategy.rollingUpdate``; the commit added the whole
    ``strategy`` (with its ``type``) beside a new image and label of the same object:
    the strategy goes entirely, the image and the label stay."""
    app = make_app(B)
    unsafe = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}
    touch = Touch(
        "Deployment",
        "cartservice",
        (
            ins("spec.strategy", unsafe),
            ins("spec.replicas", 2, 0),
            ins("metadata.labels.team", "cart"),
            set_(f"{SRV}image", "example.com/cartservice:v0.10.1"),
        ),
    )
    new, proposal = propose(app, (touch,))
    assert [f.detector for f in new] == ["rollout-strategy-unsafe"]
    assert proposal.strategy == "playbook" and proposal.playbook == "rollout-strategy-unsafe"
    app.repo.apply(proposal.edits)
    ref = Resource("Deployment", app.repo.namespace, "cartservice")
    assert app.repo.value_at(app.repo.locate(ref), ref, parse_path("spec.strategy"))[0] is False
    assert value(app, "Deployment", "cartservice", "metadata.labels.team") == "cart"
    assert value(app, "Deployment", "cartservice", f"{SRV}image").endswith("cartservice:v0.10.1")
