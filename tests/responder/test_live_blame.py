"""Blame only what is proven, for findings only the live state shows: a recent commit is
blamed only when what it changed can explain the symptom (:data:`EXPLAINS`).

The OOM kill with a harmless env var in the last commit: the env var is never
reverted. The same kill after a commit that cut the memory limit beside the env
var: the limit is restored and the env var stays. A crash loop after an env
value changed: env can explain a crash, so the value is restored.
"""

from __future__ import annotations

import time

import pytest

from gitmedic.bot.responder.live_blame import EXPLAINS, SYMPTOMS, explains, field_group
from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Obj, Resource
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import Fault, Touch, crashloop, incident_of, ins, new_findings, set_

B = "online-boutique"
SRV = "spec.template.spec.containers[name=server]."


def _propose(app, touch: Touch, live_fault: Fault):  # type: ignore[no-untyped-def]
    before = app.findings()
    app.commit("payment: structured logs", touch)
    new = new_findings(before, app.findings(live_fault))
    assert new, "the live symptom is seen"
    incident = incident_of(app.repo.path, new, time.time(), app.live(live_fault))
    return new, Responder(app.repo, completion=no_llm).propose(incident)


OOM = Fault("oom", B, (), live=crashloop("paymentservice", "server", "OOMKilled"))
CRASH = Fault("crash", B, (), live=crashloop("paymentservice", "server"))
# An env var added and another one's value respelled: neither changes how much memory runs.
LOGS = Touch(
    "Deployment",
    "paymentservice",
    (
        ins(f"{SRV}env[0]", {"name": "LOG_FORMAT", "value": "json"}),
        set_(f"{SRV}env[name=DISABLE_PROFILER].value", "true"),
    ),
)


def _env(app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    ref = Resource("Deployment", app.repo.namespace, "paymentservice")
    env = app.repo.value_at(app.repo.locate(ref), ref, parse_path(f"{SRV}env"))[1]
    return {e["name"]: e.get("value") for e in env}


def _env_names(app) -> list[str]:  # type: ignore[no-untyped-def]
    return list(_env(app))


def test_a_harmless_env_var_is_not_blamed_for_an_oom_kill(make_app: MakeApp) -> None:
    app = make_app(B)
    new, proposal = _propose(app, LOGS, OOM)
    assert [f.rule for f in new] == ["oom-killed"]
    assert proposal.commit is None or "structured logs" not in proposal.commit.subject
    assert not [e for e in proposal.edits if "env" in map(str, e.path)], proposal.diagnosis
    app.repo.apply(proposal.edits)
    assert "LOG_FORMAT" in _env_names(app) and _env(app)["DISABLE_PROFILER"] == "true"


def test_an_oom_kill_after_a_cut_limit_restores_the_limit_and_keeps_the_env_var(
    make_app: MakeApp,
) -> None:
    app = make_app(B)
    limit = parse_path(f"{SRV}resources.limits.memory")
    ref = Resource("Deployment", app.repo.namespace, "paymentservice")
    good = app.repo.value_at(app.repo.locate(ref), ref, limit)[1]
    touch = Touch(
        "Deployment",
        "paymentservice",
        (*LOGS.changes, set_(f"{SRV}resources.limits.memory", "96Mi")),
    )
    _, proposal = _propose(app, touch, OOM)
    assert proposal.commit is not None and "structured logs" in proposal.commit.subject
    assert [tuple(e.path) for e in proposal.edits] == [limit]
    app.repo.apply(proposal.edits)
    assert app.repo.value_at(app.repo.locate(ref), ref, limit)[1] == good
    assert "LOG_FORMAT" in _env_names(app) and _env(app)["DISABLE_PROFILER"] == "true"


def test_an_env_change_can_explain_a_crash_loop_and_is_restored(make_app: MakeApp) -> None:
    app = make_app(B)
    original = app.files()
    port = Touch("Deployment", "paymentservice", (set_(f"{SRV}env[name=PORT].value", "50052"),))
    _, proposal = _propose(app, port, CRASH)
    assert proposal.commit is not None and "structured logs" in proposal.commit.subject
    app.repo.apply(proposal.edits)
    assert app.files() == original


# -- the table ---------------------------------------------------------------------------


def _deployment() -> Obj:
    return Obj(Resource("Deployment", "ns", "api", "apps/v1"), {"kind": "Deployment", "spec": {}})


@pytest.mark.parametrize(
    ("symptom", "path", "expected"),
    [
        ("oom", f"{SRV}env[name=LOG_FORMAT]", False),
        ("oom", f"{SRV}resources.limits.memory", True),
        ("oom", f"{SRV}image", True),
        ("oom", "spec.template.metadata.labels.team", False),
        ("crash", f"{SRV}env[name=LOG_FORMAT].value", True),
        ("image", f"{SRV}env", False),
        ("image", "spec.template.spec.imagePullSecrets", True),
        ("scheduling", "spec.template.spec.nodeSelector", True),
        ("scheduling", f"{SRV}command", False),
        ("not-ready", f"{SRV}readinessProbe.httpGet.port", True),
        ("crash", "spec.replicas", False),
    ],
)
def test_which_field_groups_explain_which_symptom(symptom: str, path: str, expected: bool) -> None:
    assert explains(symptom, _deployment(), parse_path(path)) is expected


def test_every_symptom_class_has_its_field_groups() -> None:
    assert set(SYMPTOMS.values()) == set(EXPLAINS)
    assert (
        field_group(_deployment(), parse_path("spec.template.spec.containers[name=x]"))
        == "container"
    )
    assert field_group(_deployment(), parse_path("metadata.labels.a")) is None
