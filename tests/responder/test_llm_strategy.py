"""The LLM path: a fault no playbook and no bisect explains (a feature flag turned on in
a ConfigMap, seen live as another service crash-looping). A scripted model reads,
proposes, and diagnoses; its malformed edits are dropped with a reason; planted
secrets never reach a prompt nor the proposal. Without a model the incident is
escalated; a runtime-only playbook escalates without asking the model at all."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Resource
from gitmedic.reconciler.config import LlmConfig
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import (
    POD,
    AppRepo,
    Fault,
    Touch,
    add,
    crashloop,
    incident_of,
    ins,
    new_findings,
    set_,
)

OTEL = "astronomy-shop-otel-demo"
FLAG = 'data["demo.flagd.json"]'
PLANTED = ("s3cr3t-planted-value-1", "hunter2-planted-value-2", "planted-value-3-xyz")
MODEL = LlmConfig(model="openai/scripted", max_steps=10)
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "payments"},
          "stringData": {"api-key": PLANTED[0]}}  # fmt: skip
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "db-config"},
          "data": {"password": PLANTED[1], "host": "db"}}  # fmt: skip
CREDENTIALS = (
    Touch("Secret", "payments", (add(SECRET),)),
    Touch("ConfigMap", "db-config", (add(CONFIG),)),
    Touch("Deployment", "ad", (ins(f"{POD}containers[name=ad].env[0]",
                                   {"name": "DB_PASSWORD", "value": PLANTED[2]}),)),
)  # fmt: skip

pytestmark = pytest.mark.integration  # the responder with a scripted model on a real app


class Scripted:
    """An OpenAI-shaped completion function that replays tool calls and records prompts."""

    def __init__(self, *steps: list[tuple[str, dict[str, Any]]]) -> None:
        self.steps: Iterator[list[tuple[str, dict[str, Any]]]] = iter(steps)
        self.sent: list[str] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.sent.append(json.dumps(kwargs["messages"]))
        calls = [
            SimpleNamespace(id=f"c{i}", function=SimpleNamespace(name=n, arguments=json.dumps(a)))
            for i, (n, a) in enumerate(next(self.steps))
        ]
        message = SimpleNamespace(content=None, tool_calls=calls)
        usage = SimpleNamespace(prompt_tokens=80, completion_tokens=20)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage)


def flag_incident(app: AppRepo) -> tuple[Any, str]:
    app.commit("add credentials", *CREDENTIALS)
    ref = Resource("ConfigMap", app.repo.namespace, "flagd-config")
    file = app.repo.locate(ref)
    good = app.repo.value_at(file, ref, parse_path(FLAG))[1]
    before = app.findings()
    on = good.replace('"defaultVariant": "off"', '"defaultVariant": "on"', 1)
    app.commit("turn a flag on", Touch("ConfigMap", "flagd-config", (set_(FLAG, on),)))
    fault = Fault("feature-flag", OTEL, (), live=crashloop("cart", "cart"))
    new = new_findings(before, app.findings(fault))
    assert [f.detector for f in new] == ["pod-crashloop"]
    return incident_of(app.repo.path, new, time.time(), app.live(fault)), good


def test_the_scripted_model_fixes_it_and_bad_edits_are_dropped(make_app: MakeApp) -> None:
    app = make_app(OTEL)
    incident, good = flag_incident(app)
    file = app.repo.path
    edit = {"file": file, "kind": "ConfigMap", "name": "flagd-config", "path": FLAG,
            "op": "set", "value": good}  # fmt: skip
    model = Scripted(
        [("read_file", {"path": file}), ("get_object", {"kind": "Secret", "name": "payments"})],
        [("events", {"kind": "Deployment", "name": "cart"}), ("read_playbook", {})],
        [
            ("propose_edit", edit),
            ("propose_edit", {**edit, "file": "apps/no-such-file.yaml"}),
            ("propose_edit", {**edit, "path": "data.nosuch.key"}),
            ("propose_edit", {**edit, "file": "../../etc/passwd"}),
            ("propose_edit", {**edit, "name": "no-such-map"}),
        ],
        [("submit_diagnosis", {"summary": "a flag in flagd-config was turned on"})],
    )
    proposal = Responder(app.repo, llm=MODEL, completion=model).propose(incident)

    assert proposal.strategy == "llm" and proposal.tokens == 400
    assert len(proposal.edits) == 1 and proposal.diagnosis == "a flag in flagd-config was turned on"
    reasons = "\n".join(proposal.rejected)
    assert len(proposal.rejected) == 4
    assert "apps/no-such-file.yaml does not exist" in reasons
    assert "data.nosuch.key does not resolve" in reasons
    assert "../../etc/passwd does not exist in the repository" in reasons
    assert "no-such-map" in reasons
    app.repo.apply(proposal.edits)
    ref = Resource("ConfigMap", app.repo.namespace, "flagd-config")
    assert app.repo.value_at(file, ref, parse_path(FLAG))[1] == good
    # The model did read the file and the Secret holding the planted values.
    assert "payments" in model.sent[1] and "DB_PASSWORD" in model.sent[1]
    shown = [*model.sent, proposal.diagnosis, json.dumps(proposal.to_json())]
    for secret in PLANTED:
        assert not [text for text in shown if secret in text], secret


def test_without_a_model_the_incident_is_escalated_with_its_evidence(make_app: MakeApp) -> None:
    app = make_app(OTEL)
    incident, _ = flag_incident(app)
    proposal = Responder(app.repo, completion=no_llm).propose(incident)
    assert proposal.strategy == "escalate" and not proposal.edits and not proposal.is_fix
    assert proposal.escalation is not None
    assert "no desired-state cause found" in proposal.escalation.reason
    assert [e["detector"] for e in proposal.escalation.evidence] == ["pod-crashloop"]


RUNTIME = """---
id: database-auth
fault_class: database-auth
title: The database refuses the app's credentials
detectors: [pod-crashloop]
risk: high
runtime_only: true
---
## Decide
## Triage
## Localize
## Verify
## Mitigate
Escalate: the fault is inside the database, not in the manifests.
"""


@pytest.mark.parametrize("with_model", [True, False])
def test_a_runtime_only_playbook_escalates_without_asking_the_model(
    make_app: MakeApp, with_model: bool
) -> None:
    app = make_app(OTEL)
    incident, _ = flag_incident(app)
    book = app.git.root / ".gitmedic" / "playbooks" / "database-auth" / "README.md"
    book.parent.mkdir(parents=True)
    book.write_text(RUNTIME)
    responder = Responder(app.repo, llm=MODEL if with_model else None, completion=no_llm)
    proposal = responder.propose(incident)
    assert proposal.strategy == "escalate" and proposal.tokens == 0
    assert proposal.escalation is not None
    assert "database-auth is runtime-only" in proposal.escalation.reason


def test_a_runtime_fault_with_no_git_change_escalates_without_the_model(
    make_app: MakeApp,
) -> None:
    """A crash loop (database auth errors) and no commit since the app was imported:
    the built-in runtime-only playbooks decide, with no edits and zero tokens."""
    app = make_app(OTEL)
    fault = Fault("database-auth-revoked", OTEL, (), live=crashloop("cart", "cart"))
    new = new_findings(app.findings(), app.findings(fault))
    assert [f.detector for f in new] == ["pod-crashloop"]
    incident = incident_of(app.repo.path, new, time.time(), app.live(fault))
    proposal = Responder(app.repo, llm=MODEL, completion=no_llm).propose(incident)
    assert proposal.strategy == "escalate" and not proposal.edits and not proposal.is_fix
    assert proposal.tokens == 0 and proposal.cost_usd == 0.0
    assert proposal.escalation is not None
    assert "no recent change to the app" in proposal.escalation.reason
    assert "playbook database-auth-revoked is runtime-only" in proposal.escalation.reason
    assert [e["detector"] for e in proposal.escalation.evidence] == ["pod-crashloop"]
