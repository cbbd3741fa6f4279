"""A retry PR links the attempt it follows and says what the oracles found on it (golden)."""

from __future__ import annotations

from dataclasses import replace

from gitmedic.bot.render.changes import FieldChange
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.pr_body import PrBodyInput, VerificationPlan, render_pr_body
from gitmedic.bot.render.retry_note import retry_section
from gitmedic.reconciler.transaction import Phase, TxnState
from tests.bot.test_pr_body import LOW, TARGET_PORT
from tests.bot.test_revert_body import undoing
from tests.support.golden import assert_golden


def reverted() -> TxnState:
    return replace(undoing(), phase=Phase.RESTORED, revert_pr=5, announced=True)


def retry_body() -> PrBodyInput:
    return PrBodyInput(
        incident="inc-1",
        app="shop",
        summary="Restore catalog's image and its entrypoint together.",
        findings=(TARGET_PORT,),
        diagnosis="Attempt 1 restored the image alone; the old image lacks the entrypoint.",
        strategy="bisect",
        decision=LOW,
        plan=VerificationPlan("the simulator", 600, ("detectors",), 120, 2, 3),
        fields=(
            FieldChange("apps/shop/catalog.yaml", "Deployment shop/catalog: spec.x", "a", "b"),
        ),
        follows=retry_section(reverted()),
    )


def test_the_retry_body_matches_the_golden_file() -> None:
    assert_golden("pr_bodies/retry.md", render_pr_body(retry_body()).text)


def test_the_retry_links_the_undone_pr_its_revert_and_the_oracles_findings() -> None:
    section = retry_section(reverted())
    assert "#4, reverted by #5, which ended **reverted**" in section
    assert "- probe /products: 503" in section
    assert "| after #4 | 18 |" in section and MU_EXPLAINED in section
    assert "pod-crashloop" in section  # what the undone attempt caused


def test_a_first_attempt_has_no_such_section() -> None:
    body = render_pr_body(replace(retry_body(), follows="")).text
    assert "## Follows attempt" not in body and "## Summary\n\nRestore" in body
