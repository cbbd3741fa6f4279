"""Causes in related objects: the walk from a finding's object to the objects it relates to,
and bisect restoring the change there when the object itself did not change.

The relabel fault: the last commit changes a Deployment's pod labels (its selector and
pod template together, so the Deployment itself is valid) and leaves the Service that
fronts it as it was. On four real apps the proposal restores exactly those labels,
keeps a good change the same commit made, and never edits the Service.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from gitmedic.bot.responder.related import related_objects
from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Obj, Resource, Snapshot
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import Touch, incident_of, ins, new_findings, set_

# app -> (Deployment, Service, the selector key); hotel-reservation is a folder of files
RELABEL = {
    "online-boutique": ("cartservice", "cartservice", "app"),
    "sock-shop": ("catalogue", "catalogue", "name"),
    "hotel-reservation": ("geo", "geo", '["io.kompose.service"]'),
    "train-ticket": ("ts-order-service", "ts-order-service", "app"),
}


def _label(key: str) -> str:
    return key if key.startswith("[") else f".{key}"


@pytest.mark.parametrize("name", sorted(RELABEL))
def test_a_relabelled_workload_gets_its_labels_back_and_the_service_stays(
    name: str, make_app: MakeApp
) -> None:
    deployment, service, key = RELABEL[name]
    app = make_app(name)
    ref = Resource("Deployment", app.repo.namespace, deployment)
    svc = Resource("Service", app.repo.namespace, service)
    selector, template = (
        f"spec.selector.matchLabels{_label(key)}",
        f"spec.template.metadata.labels{_label(key)}",
    )
    good = _value(app, ref, selector)
    service_text = _object_text(app, svc)
    before = app.findings()
    relabel = (set_(selector, f"{good}-v2"), set_(template, f"{good}-v2"))
    replicas = ins("spec.replicas", 3, 0) if not _has(app, ref, "spec.replicas") else None
    extra = (replicas,) if replicas else (set_("spec.replicas", 3),)
    app.commit(
        "new pod labels and three replicas", Touch("Deployment", deployment, (*relabel, *extra))
    )
    new = new_findings(before, app.findings())
    assert [f.detector for f in new] == ["service-selector-unmatched"]
    assert new[0].resource == svc and new[0].related == ()

    proposal = Responder(app.repo, completion=no_llm).propose(
        incident_of(app.repo.path, new, time.time(), None)
    )

    assert proposal.strategy == "bisect", proposal.diagnosis
    assert proposal.commit is not None and proposal.commit.subject.startswith("new pod labels")
    assert {e.resource for e in proposal.edits} == {ref}
    assert sorted(tuple(e.path) for e in proposal.edits) == sorted(
        [parse_path(selector), parse_path(template)]
    )
    assert f"{ref} is selected by {svc}" in proposal.diagnosis
    assert "Proof: with that undone, the re-rendered desired state no longer shows" in (
        proposal.diagnosis
    )
    app.repo.apply(proposal.edits)
    assert (_value(app, ref, selector), _value(app, ref, template)) == (good, good)
    assert _value(app, ref, "spec.replicas") == 3, "the good change of the same commit stays"
    assert _object_text(app, svc) == service_text
    assert not [f for f in app.findings() if f.detector == "service-selector-unmatched"]


def test_an_unrelated_workload_relabelled_with_the_fault_is_not_restored(make_app: MakeApp) -> None:
    """Only objects related to the finding are searched: another Deployment the same
    commit relabelled (its own Service follows it) keeps its new labels."""
    app = make_app("online-boutique")
    before = app.findings()
    cart = (
        set_("spec.selector.matchLabels.app", "cart-v2"),
        set_("spec.template.metadata.labels.app", "cart-v2"),
    )
    ads = (
        set_("spec.selector.matchLabels.app", "ads-v2"),
        set_("spec.template.metadata.labels.app", "ads-v2"),
    )
    app.commit(
        "relabel",
        Touch("Deployment", "cartservice", cart),
        Touch("Deployment", "adservice", ads),
        Touch("Service", "adservice", (set_("spec.selector.app", "ads-v2"),)),
    )
    new = new_findings(before, app.findings())
    proposal = Responder(app.repo, completion=no_llm).propose(
        incident_of(app.repo.path, new, time.time(), None)
    )
    assert {e.resource.name for e in proposal.edits} == {"cartservice"}
    assert "equals reverting" not in proposal.diagnosis


# -- the walk --------------------------------------------------------------------------


def _obj(kind: str, name: str, body: dict[str, Any]) -> Obj:
    api = "v1" if kind in ("Service", "ConfigMap", "Secret", "PersistentVolumeClaim") else "apps/v1"
    full = {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns"}, **body}
    return Obj(Resource(kind, "ns", name, api), full)


def _deployment(name: str, labels: dict[str, str], pod: dict[str, Any]) -> Obj:
    template = {"metadata": {"labels": labels}, "spec": pod}
    return _obj(
        "Deployment", name, {"spec": {"selector": {"matchLabels": labels}, "template": template}}
    )


POD = {
    "serviceAccountName": "api-sa",
    "containers": [
        {
            "name": "api",
            "image": "api:1",
            "env": [
                {"name": "DB_ADDR", "value": "db:5432"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "api-token", "key": "t"}}},
                {"name": "EXTERNAL", "value": "https://api.stripe.com"},
            ],
            "envFrom": [{"configMapRef": {"name": "api-config"}}],
        }
    ],
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "api-data"}}],
}


def test_a_workload_relates_to_what_its_pod_spec_references_and_the_services_it_calls() -> None:
    api = _deployment("api", {"app": "api"}, POD)
    db = _obj("Service", "db", {"spec": {"selector": {"app": "db"}}})
    found = related_objects(api.ref, [Snapshot([api, db])])
    assert [(r.ref.kind, r.ref.name) for r in found] == [
        ("Secret", "api-token"),
        ("ConfigMap", "api-config"),
        ("PersistentVolumeClaim", "api-data"),
        ("ServiceAccount", "api-sa"),
        ("Service", "db"),
    ]
    assert found[-1].why == "addressed by Deployment/ns/api (env DB_ADDR)"


def test_a_service_relates_to_what_it_selects_in_any_revision_and_what_it_names() -> None:
    svc = _obj("Service", "web", {"spec": {"selector": {"app": "web"}}})
    before = Snapshot(
        [svc, _deployment("web", {"app": "web"}, {"containers": []})], revision="a" * 40
    )
    after = Snapshot(
        [svc, _deployment("web", {"app": "web-v2"}, {"containers": []})], revision="b" * 40
    )
    other = _deployment("worker", {"app": "worker"}, {"containers": []})
    found = related_objects(svc.ref, [after, before])
    assert [(r.ref.name, r.why) for r in found] == [("web", "named by Service/ns/web")]
    found = related_objects(svc.ref, [before, after])
    assert [(r.ref.name, r.why) for r in found] == [
        ("web", f"selected by Service/ns/web at {'a' * 12}")
    ]
    named = _obj("Service", "worker", {"spec": {"selector": {"app": "nothing"}}})
    assert [r.ref.name for r in related_objects(named.ref, [Snapshot([named, other])])] == [
        "worker"
    ]
    assert related_objects(svc.ref, [Snapshot([other])]) == []  # not in the snapshot: nothing


def _value(app: Any, ref: Resource, path: str) -> Any:
    return app.repo.value_at(app.repo.locate(ref), ref, parse_path(path))[1]


def _has(app: Any, ref: Resource, path: str) -> bool:
    return bool(app.repo.value_at(app.repo.locate(ref), ref, parse_path(path))[0])


def _object_text(app: Any, ref: Resource) -> str:
    obj = next(o for o in app.desired() if o.ref == ref)
    assert obj.source is not None
    return str(obj.body)
