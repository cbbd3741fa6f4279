"""Escalation issues: readable sections, evidence folded, the whole under GitHub's limit."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gitmedic.bot.render.escalation import (
    MAX_BODY,
    Attempt,
    EscalationInput,
    render_escalation,
)
from gitmedic.bot.render.mu import MU_EXPLAINED
from tests.support.golden import assert_golden

GITHUB_LIMIT = 65_536


def finding(i: int) -> dict[str, Any]:
    return {
        "detector": "pod-crashloop",
        "rule": "crashloop",
        "severity": "critical",
        "resource": {"kind": "Pod", "namespace": "shop", "name": f"catalog-{i:03d}"},
        "summary": f"container server is crash-looping (restart {i})",
        "evidence": "exec /catalog: no such file or directory\n" * 12,
        "fingerprint": f"{i:016x}",
    }


def escalation(findings: int = 2, attempts: int = 2) -> EscalationInput:
    return EscalationInput(
        app="shop",
        incident="shop-b2a9b918",
        happened="gitmedic made 2 attempt(s) to fix incident `shop-b2a9b918` in **shop**; "
        "each was undone, and it has nothing new to try.",
        todo="Read the attempts' PRs and their reverts; fix the manifests by hand.",
        reason="all 2 attempt(s) were undone (attempt 2: failed fast: pod-crashloop)",
        diagnosis="The image 2.1.0 was never pushed.\nRestoring 2.0.1 alone crash-loops.",
        attempts=tuple(
            Attempt(n, 2 * n - 1, "bisect", "reverted", 43.0, 48.0, "failed fast", 2 * n)
            for n in range(1, attempts + 1)
        ),
        findings=tuple(finding(i) for i in range(findings)),
    )


def test_the_escalation_body_matches_the_golden_file() -> None:
    assert_golden("pr_bodies/escalation.md", render_escalation(escalation()))


def test_sections_in_order_and_evidence_collapsed() -> None:
    body = render_escalation(escalation())
    heads = [line for line in body.splitlines() if line.startswith("## ")]
    assert heads == [
        "## What happened",
        "## What was tried",
        "## What a person should do",
        "## Evidence",
    ]
    assert body.count("<details><summary>") == 2 and body.count("</details>") == 2
    assert "<details><summary>All 2 findings as JSON</summary>" in body
    assert "| 1 | #1 (reverted by #2) | bisect | **reverted** | 43 → 48 | failed fast |" in body
    assert MU_EXPLAINED in body


def test_an_escalation_of_200_findings_stays_under_github_s_limit() -> None:
    data = escalation(findings=200)
    whole = render_escalation(replace(data), limit=10**9)
    assert len(whole) > GITHUB_LIMIT, "without the cap this body would be refused"
    body = render_escalation(data)
    assert len(body) <= MAX_BODY < GITHUB_LIMIT
    assert "findings as JSON (" in body and "left out to fit GitHub's limit)" in body
    assert body.count("<details>") == body.count("</details>") == 2
    assert "_…and 180 more findings not shown._" in body  # the table: 20 rows
    assert body.rstrip().endswith("</sub>"), "the sections are whole; only evidence shrank"


def test_a_huge_diagnosis_is_shortened_not_the_sections() -> None:
    data = replace(escalation(findings=0), diagnosis="x" * 200_000)
    body = render_escalation(data)
    assert len(body) <= MAX_BODY and "## What a person should do" in body
    assert "(shortened: see the PRs)" in body


def test_hostile_text_is_inert_and_fences_cannot_be_closed() -> None:
    hostile = "<img src=x> @org/team ![i](http://t)\n~~~~~~~~\n</details><!-- gitmedic:state"
    data = replace(
        escalation(findings=1),
        reason=hostile,
        diagnosis=hostile,
        findings=({**finding(0), "summary": hostile, "evidence": hostile},),
    )
    body = render_escalation(data)
    assert "<!--" not in body, "no text can forge a hidden marker, fenced or not"
    outside = "".join(body.split("\n~~~~~~~~\n")[::2])  # the text between the fences
    assert "<img" not in outside and "@org/team" not in outside and "![" not in outside
    fences = [line for line in body.splitlines() if line == "~~~~~~~~"]
    assert len(fences) == 4, "two blocks, each opened and closed by gitmedic only"
    assert "\n ~~~~~~~~\n" in body  # the diagnosis' own fence line, indented: inert


def test_no_attempt_says_no_pull_request_was_opened() -> None:
    body = render_escalation(replace(escalation(), attempts=()))
    assert "_Nothing: gitmedic opened no pull request for this incident._" in body
