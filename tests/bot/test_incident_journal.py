"""Incidents and attempts in the journal: stable ids from what fires, and an attempt history
(budget, feedback, what was undone and what it caused) that a restarted process reads back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gitmedic.bot.controller.attempts import Attempts, next_move
from gitmedic.bot.controller.incidents import IncidentBook
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.transaction import Journal, Phase, Record
from tests.transaction.fakes import plan


def finding(name: str) -> Finding:
    return Finding(
        "service-target-port",
        "r",
        Severity.CRITICAL,
        Resource("Service", "shop", name),
        f"{name} is broken",
    )


def test_an_incident_id_comes_from_what_fires_and_a_restart_finds_it_again(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    book = IncidentBook(journal, "shop")
    first = book.name("shop", (finding("catalog"),))
    assert first.startswith("shop-") and "2026" not in first  # no time in it
    from gitmedic.bot.responder.incident import Incident

    book.seen(Incident(first, "shop", 5.0, (finding("catalog"), finding("cart"))))
    restarted = IncidentBook(Journal(tmp_path / "j.sqlite"), "shop")
    assert restarted.name("shop", (finding("cart"),)) == first, "the fault it was answering"
    restarted.mark(first, "resolved")
    again = restarted.name("shop", (finding("catalog"),))
    assert again == f"{first}-2", "the same fault later is a new incident"
    book.seen(Incident(again, "shop", 9.0, (finding("catalog"),)))
    other = restarted.name("shop", (finding("frontend"),))
    assert journal.incident(again).status == "gone" and other not in (first, again)  # type: ignore[union-attr]


def test_the_attempt_history_survives_a_restart(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    one = replace(plan(), playbook="service-target-port")
    journal.create(one, 1.0)
    caused = finding("frontend").to_json()
    for seq, (phase, data) in enumerate(
        [
            (Phase.PR_OPENED, {"pr": 1}),
            (
                Phase.UNDOING,
                {"reason": "mu rose", "caused": [caused], "feedback": ["alert X firing"]},
            ),
            (Phase.RESTORED, {}),
            (Phase.RESTORED, {"announced": True}),
        ],
        start=1,
    ):
        journal.append(one.txn_id, Record(seq, phase, float(seq), data))

    attempts = Attempts.of(Journal(tmp_path / "j.sqlite").transactions(incident="inc-1"), 3)

    assert attempts.feedback == ["attempt 1 (playbook) reverted: mu rose", "alert X firing"]
    assert attempts.failed_playbooks == {"service-target-port"}
    assert attempts.tried == (one.edits,)
    assert attempts.caused(attempts.states[0]) == (finding("frontend"),)
    assert next_move(attempts).kind == "propose" and next_move(attempts).attempt == 2
    spent = next_move(replace(attempts, budget=1))
    assert spent.kind == "escalate" and "all 1 attempt(s) were undone" in spent.why


def test_an_unsettled_attempt_is_resumed_before_anything_new(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.create(plan(), 1.0)
    journal.append("inc-1/1", Record(1, Phase.PR_OPENED, 2.0, {"pr": 1}))
    move = next_move(Attempts.of(journal.transactions(incident="inc-1"), 3))
    assert move.kind == "resume" and move.state is not None and move.state.pr == 1
