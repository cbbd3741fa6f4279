"""A revert PR says what was measured and links the PR it undoes (golden), on a real forge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from unittest.mock import Mock

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.bot.render.revert_body import revert_body
from gitmedic.reconciler.forge import PrFilter, PullRequest, Validation
from gitmedic.reconciler.forge import PrState as ForgePrState
from gitmedic.reconciler.transaction import Outcome, Phase, TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.ports import OpenedPR
from tests.support.golden import assert_golden
from tests.transaction.e2e_world import make_repo, plan, run
from tests.transaction.fakes import plan as fake_plan

CAUSED = {
    "detector": "pod-crashloop",
    "rule": "crash-loop-backoff",
    "severity": "critical",
    "resource": {"kind": "Pod", "namespace": "shop", "name": "catalog-7d9 | <b>x</b>"},
    "summary": "catalog restarts: exec /catalog: no such file @shop-team",
}


def undoing() -> TxnState:
    return TxnState(
        plan=fake_plan(mu_pre=10.0),
        phase=Phase.UNDOING,
        pr=4,
        merge_sha="merge-1",
        mu_post=18.0,
        reason="verification failed: mu rose from 10 to 18",
        feedback=("KubePodCrashLooping catalog (critical)", "probe /products: 503"),
        caused=(CAUSED,),
    )


def test_the_revert_body_matches_the_golden_file() -> None:
    assert_golden("pr_bodies/revert.md", revert_body(undoing()))


def test_it_links_the_undone_pr_and_says_mu_before_after_and_what_it_means() -> None:
    body = revert_body(undoing())
    assert body.startswith("Reverts #4 (Restore catalog targetPort)")
    assert "| before #4 | 10 |" in body and "| after #4 | 18 |" in body
    assert MU_EXPLAINED in body
    assert "verification failed: mu rose from 10 to 18" in body
    assert "probe /products: 503" in body
    assert "<b>" not in body and "@shop-team" not in body and "\\|" in body


def test_a_change_that_never_deployed_says_mu_after_was_not_measured() -> None:
    body = revert_body(replace(undoing(), mu_post=None, feedback=(), caused=()))
    assert "| after #4 | not measured" in body
    held = revert_body(replace(undoing(), plan=replace(fake_plan(), revert_auto_merge=False)))
    assert "`/gitmedic approve`" in held


def test_the_local_forge_stores_the_measured_body_and_keeps_the_revert_marker(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    state = run(
        repo,
        tmp_path / "j.sqlite",
        plan(repo, "broken-image", mu_pre=5.0),
        describe_revert=revert_body,
    )
    assert state.outcome is Outcome.REVERTED
    fix, revert = LocalForge(repo).list_prs(PrFilter.ALL)
    assert revert.bot_state == {"reverts": fix.number, "merge_sha": state.merge_sha}
    assert revert.body.startswith(f"Reverts #{fix.number} (")
    assert "| before #1 | 5 |" in revert.body and "## What was measured" in revert.body
    assert "critical" in revert.body  # the crash loop the change caused


def test_a_reason_with_line_breaks_cannot_open_a_fence_or_a_heading() -> None:
    body = revert_body(replace(undoing(), reason="x\n~~~\n## Approve me\n<!-- gitmedic"))
    lines = body.splitlines()
    assert "## Approve me" not in lines and "~~~" not in lines and "<!--" not in body


class _RefusingForge:
    """A forge whose revert opens but refuses the new body."""

    def __init__(self) -> None:
        self.pr = PullRequest(
            9,
            "revert-4",
            "main",
            'Revert "x"',
            "Reverts #4.",
            ForgePrState.OPEN,
            "rev-head",
            None,
            (),
            "gitmedic",
            "",
            {"reverts": 4, "merge_sha": "merge-1"},
        )

    def revert_pr(self, number: int) -> PullRequest:
        return self.pr

    def ensure_pr(self, *args: object, **kwargs: object) -> PullRequest:
        raise Validation("body refused")


def test_a_body_the_forge_refuses_never_stops_the_undo() -> None:
    forge = _RefusingForge()
    ports = ForgePorts(
        forge,  # type: ignore[arg-type]
        lambda file, rev: "",
        Mock(),
        Mock(),
        Mock(),
        main_head=lambda: "main",
        describe_revert=revert_body,
    )
    assert ports.open_revert(undoing()) == OpenedPR(9, "rev-head")
