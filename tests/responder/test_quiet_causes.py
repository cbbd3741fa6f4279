"""Causes desired state holds only quietly: what a live finding names is what to restore.

- A pod-config-error names the missing Secret, not the env var that references
  it: the variable whose ``secretKeyRef`` names that Secret is implicated, and a
  legitimate variable of the same commit stays.
- An alert whose evidence names a host no Service has: the info finding
  ``env-service-address/service-missing`` on the caller is its cause, restored
  by bisect; the same alert naming nothing of it restores nothing.
"""

from __future__ import annotations

import time

from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Resource
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import AppRepo, Touch, ins, set_

SRV = "spec.template.spec.containers[name=server]."
USER = "spec.template.spec.containers[name=user]."
SECRET_REF = {"secretKeyRef": {"name": "catalog-db", "key": "password"}}


def _incident(app: AppRepo, finding: Finding) -> Incident:
    return Incident("inc", app.repo.path, time.time(), (finding,))


def _env(app: AppRepo, name: str, container: str) -> dict[str, object]:
    ref = Resource("Deployment", app.repo.namespace, name)
    path = parse_path(f"spec.template.spec.containers[name={container}].env")
    env = app.repo.value_at(app.repo.locate(ref), ref, path)[1]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in env}


def test_the_env_var_naming_the_missing_secret_goes_and_its_neighbour_stays(
    make_app: MakeApp,
) -> None:
    app = make_app("online-boutique")
    ref = Resource("Deployment", app.repo.namespace, "productcatalogservice")
    added = (
        ins(f"{SRV}env[0]", {"name": "DB_PASSWORD", "valueFrom": SECRET_REF}),
        ins(f"{SRV}env[0]", {"name": "LOG_FORMAT", "value": "json"}),
    )
    app.commit("catalog: a database and structured logs", Touch(ref.kind, ref.name, added))
    live = Finding(
        "pod-config-error",
        "secret-missing",
        Severity.CRITICAL,
        ref,
        "container server cannot be created (CreateContainerConfigError): Secret catalog-db "
        "missing",
        params={
            "container": "server",
            "missing": {"kind": "Secret", "name": "catalog-db"},
            "reason": "CreateContainerConfigError",
        },
    )

    proposal = Responder(app.repo, completion=no_llm).propose(_incident(app, live))

    assert proposal.strategy == "bisect", proposal.diagnosis
    app.repo.apply(proposal.edits)
    env = _env(app, "productcatalogservice", "server")
    assert "DB_PASSWORD" not in env and env["LOG_FORMAT"] == "json"


def _alert(app: AppRepo, evidence: str) -> Finding:
    return Finding(
        "alerts",
        "HighErrorRate",
        Severity.CRITICAL,
        Resource("Service", app.repo.namespace, "user"),
        "user answers 0% of requests",
        evidence=evidence,
    )


def _unknown_host(make_app: MakeApp) -> AppRepo:
    app = make_app("sock-shop")
    change = set_(f"{USER}env[name=mongo].value", "user-dbx:27017")
    app.commit("user: a new database address", Touch("Deployment", "user", (change,)))
    return app


def test_an_alert_naming_an_unknown_host_restores_the_address(make_app: MakeApp) -> None:
    app = _unknown_host(make_app)
    alert = _alert(app, "user -> sock-shop/user-dbx: no such Service (DNS lookup fails)")

    proposal = Responder(app.repo, completion=no_llm).propose(_incident(app, alert))

    assert proposal.strategy == "bisect", proposal.diagnosis
    assert "env-service-address" in proposal.diagnosis
    app.repo.apply(proposal.edits)
    assert _env(app, "user", "user")["mongo"] == "user-db:27017"


def test_an_alert_that_names_nothing_of_it_restores_nothing(make_app: MakeApp) -> None:
    app = _unknown_host(make_app)
    alert = _alert(app, "user answers 0 of 20 requests")

    proposal = Responder(app.repo, completion=no_llm).propose(_incident(app, alert))

    assert not proposal.edits and proposal.strategy == "escalate", proposal.diagnosis
