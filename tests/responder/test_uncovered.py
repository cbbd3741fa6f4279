"""A retry restores what the first candidate uncovered, from the commit that brought both.

hotel-reservation's consul: one commit breaks the Service's selector and the
readiness probe of the Deployment behind it. The first proposal restores the
selector (what the incident's finding names). Deployed, the Service selects the
Deployment again, whose pods are not Ready: the oracles see the Service with no
endpoints and the Deployment's replicas unavailable. The retry keeps the selector
and restores the probe from the same commit; the app's objects end as before it.
"""

from __future__ import annotations

import time

from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Resource
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults.incidents import fault, one_commit
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import AppRepo, new_findings

CONSUL_SERVICE = Resource("Service", "hotel", "consul")
CONSUL = Resource("Deployment", "hotel", "consul")


def _objects(app: AppRepo) -> dict[str, object]:
    root = app.git.root / app.repo.path
    return {str(o.ref): o.body for o in load_desired(root, namespace=app.repo.namespace).snapshot}


def _two_faults(make_app: MakeApp) -> tuple[AppRepo, dict[str, object], Incident]:
    app = make_app("hotel-reservation")
    good, before = _objects(app), app.findings()
    faults = [
        fault("service-selector-mismatch", target="consul"),
        fault("readiness-probe-wrong", target="consul"),
    ]
    root, path = app.git.root, app.git.root / app.repo.path
    one_commit(root, path, app.repo.namespace, faults, "consul: a selector and a probe")
    new = [f for f in new_findings(before, app.findings()) if f.severity is Severity.CRITICAL]
    assert [f.resource for f in new] == [CONSUL_SERVICE]
    return app, good, Incident("inc", app.repo.path, time.time(), tuple(new))


def _no_endpoints() -> Finding:
    return Finding(
        "service-no-endpoints",
        "service-no-endpoints",
        Severity.CRITICAL,
        CONSUL_SERVICE,
        "Service consul has no ready endpoints",
        related=(CONSUL,),
    )


def test_the_retry_restores_the_probe_the_same_commit_broke(make_app: MakeApp) -> None:
    app, good, incident = _two_faults(make_app)
    responder = Responder(app.repo, completion=no_llm)
    first = responder.propose(incident)
    assert {e.resource for e in first.edits} == {CONSUL_SERVICE}

    feedback = ("Deployment/hotel/consul: 1 of 1 replicas unavailable",)
    retry = responder.extend(incident, first, [_no_endpoints()], feedback)

    assert retry is not None
    assert {e.resource for e in retry.edits} == {CONSUL_SERVICE, CONSUL}, retry.diagnosis
    assert "readinessProbe" in retry.diagnosis and "same commit" in retry.diagnosis
    app.repo.apply(retry.edits)
    assert _objects(app) == good


def test_what_the_commit_did_not_change_is_not_restored(make_app: MakeApp) -> None:
    app, _, incident = _two_faults(make_app)
    responder = Responder(app.repo, completion=no_llm)
    first = responder.propose(incident)
    elsewhere = Resource("Deployment", "hotel", "geo")
    caused = Finding(
        "deployment-unavailable",
        "unavailable",
        Severity.CRITICAL,
        elsewhere,
        "Deployment geo has 0/1 replicas available",
    )

    assert responder.extend(incident, first, [caused], ("Deployment/hotel/geo: down",)) is None
