"""PR bodies: the fixed anatomy pinned by golden files, masking, controls read back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.policy.decide import Decision
from gitmedic.bot.render.changes import FieldChange
from gitmedic.bot.render.pr_body import (
    IntroducingCommit,
    PrBodyInput,
    VerificationPlan,
    checked_controls,
    newly_checked,
    render_pr_body,
)
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.redact import REGISTRY
from tests.forge.backends import BRANCH, FIX, commit_files, make_repo
from tests.support.golden import assert_golden

TARGET_PORT = Finding(
    detector="service-target-port",
    rule="no-container-port",
    severity=Severity.CRITICAL,
    resource=Resource("Service", "shop", "catalog"),
    summary="Service catalog targets port 8081, which no selected container exposes",
    evidence="spec.ports[0].targetPort: 8081\ncontainers expose: 8080 (http)",
    related=(Resource("Deployment", "shop", "catalog", "apps/v1"),),
    playbooks=("playbooks/service-target-port/README.md",),
    params={"port": 8081},
)
ENV_LEAK = Finding(
    detector="env-service-address",
    rule="unknown-host",
    severity=Severity.WARNING,
    resource=Resource("Deployment", "shop", "checkout", "apps/v1"),
    summary="DATABASE_URL points at db-old | a Service that does not exist",
    evidence="DATABASE_URL=postgres://shop:hunter22secret@db-old:5432/shop\n"
    "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 <!-- gitmedic:control retry -->",
)
LOW = Decision("low", True, "rule 'ports' matched -> low; low risk is within auto_merge", "ports")
HELD = Decision("medium", False, "no policy rule matched (default: medium)", None)
PLAN = VerificationPlan("Argo CD", 600, ("cluster state of shop", "detectors"), 120, 1, 3)


def playbook_body() -> PrBodyInput:
    return PrBodyInput(
        incident="inc-7f3a",
        app="shop",
        summary="Restore the catalog Service's targetPort so traffic reaches the pods again.",
        findings=(TARGET_PORT,),
        diagnosis="The Service's targetPort 8081 matches no containerPort of catalog's pods.",
        strategy="playbook",
        decision=LOW,
        plan=PLAN,
        fields=(
            FieldChange(
                "apps/shop/catalog.yaml",
                "Service shop/catalog: spec.ports[0].targetPort",
                "8081",
                "8080",
            ),
        ),
        txn_id="inc-7f3a-1",
        playbook="service-target-port",
    )


def bisect_body() -> PrBodyInput:
    return PrBodyInput(
        incident="inc-0b1c",
        app="shop",
        summary="Restore DATABASE_URL of checkout as it was before abc1234.",
        findings=(ENV_LEAK, TARGET_PORT),
        diagnosis="Commit abc1234 changed DATABASE_URL; the new host resolves to nothing.",
        strategy="bisect",
        decision=HELD,
        plan=VerificationPlan("Flux", 300, (), 60, 3, 3),
        commit=IntroducingCommit("abc1234def5678901234", "Bob <bob@example.com>", "`move` db"),
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [("playbook.md", playbook_body()), ("bisect_held_last_attempt.md", bisect_body())],
)
def test_pr_bodies_match_golden_files(name: str, data: PrBodyInput) -> None:
    assert_golden(f"pr_bodies/{name}", render_pr_body(data).text)


def test_llm_bodies_say_the_tokens_spent() -> None:
    data = PrBodyInput(**{**playbook_body().__dict__, "strategy": "llm", "tokens": 4321})
    assert "**LLM tokens spent:** 4321" in render_pr_body(data).text


def test_findings_render_only_in_masked_form() -> None:
    REGISTRY.add("catalog-internal-key-77")
    leaky = Finding(**{**ENV_LEAK.__dict__, "summary": "key catalog-internal-key-77 in env"})
    text = render_pr_body(PrBodyInput(**{**bisect_body().__dict__, "findings": (leaky,)})).text
    for secret in ("hunter22secret", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "internal-key"):
        assert secret not in text
    # "@db-old" after "****" is a mention as GitHub reads it: a word joiner keeps it text.
    assert "postgres://shop:****@\u2060db-old" in text


def tick(body: str, name: str) -> str:
    return body.replace(
        f"- [ ] <!-- gitmedic:control {name}", f"- [x] <!-- gitmedic:control {name}"
    )


def test_text_from_findings_or_diagnosis_cannot_forge_a_control_or_state() -> None:
    forged = "- [x] <!-- gitmedic:control retry --> ok\n<!-- gitmedic:state {} -->"
    text = render_pr_body(PrBodyInput(**{**bisect_body().__dict__, "diagnosis": forged})).text
    assert checked_controls(text) == set()
    assert text.count("<!-- gitmedic:control retry -->") == 1  # only the real control
    assert "<!-- gitmedic:state" not in text


def test_state_carries_what_the_bot_needs_to_resume() -> None:
    assert render_pr_body(playbook_body()).state == {
        "incident": "inc-7f3a",
        "app": "shop",
        "attempt": 1,
        "max_attempts": 3,
        "strategy": "playbook",
        "risk": "low",
        "auto_merge": True,
        "targets": [TARGET_PORT.fingerprint],
        "txn": "inc-7f3a-1",
        "playbook": "service-target-port",
    }


@pytest.mark.parametrize(
    ("edit", "checked"),
    [
        (lambda b: b, set()),
        (lambda b: tick(b, "retry"), {"retry"}),
        (lambda b: b.replace("[ ] <!--", "[X] <!--"), {"retry", "hold"}),
        (lambda b: b + "\n- [x] <!-- gitmedic:control nuke --> Nuke", set()),  # unknown control
        (lambda b: b.replace("<!-- gitmedic:control hold -->", ""), set()),  # marker removed
    ],
)
def test_checked_controls_are_read_back(edit: Callable[[str], str], checked: set[str]) -> None:
    body = render_pr_body(playbook_body()).text
    assert checked_controls(edit(body)) == checked


def test_newly_checked_compares_an_edit_with_the_previous_body() -> None:
    before = tick(render_pr_body(playbook_body()).text, "hold")
    after = tick(before, "retry")
    assert newly_checked(before, after) == {"retry"}
    assert newly_checked(after, before) == set()


def test_the_forge_adds_the_state_marker_and_a_ticked_box_survives_a_re_render(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    forge = LocalForge(repo)
    commit_files(repo, BRANCH, FIX, "main")
    rendered = render_pr_body(playbook_body())
    pr = forge.ensure_pr(BRANCH, "main", "Fix targetPort", rendered.text, state=rendered.state)
    assert pr.bot_state == rendered.state
    forge.edit_body(pr.number, tick(pr.body, "hold"))
    again = forge.ensure_pr(BRANCH, "main", "Fix targetPort", rendered.text, state=rendered.state)
    assert checked_controls(again.body) == {"hold"}
