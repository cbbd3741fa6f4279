"""Dashboard boxes: which are offered, which ticks count, and acting on them as commands do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gitmedic.bot.commands.dispatch import CommentEvent, handle_comment, refusal
from gitmedic.bot.render.dashboard import DashboardKeeper, DashboardView
from gitmedic.bot.render.dashboard_controls import Control, controls_of, newly_ticked, ticked
from gitmedic.bot.service.dashboard_desk import DashboardDesk, DashboardEdit, handle_edit
from gitmedic.bot.service.webhook.handlers import Deps, on_issues
from gitmedic.reconciler.forge import BOT_LOGIN, Permission
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot import payloads
from tests.bot.fakes import FakeActions, Scene, scene
from tests.bot.test_dashboard import journal_with_history, plan, record

HOLD_4 = "- [ ] <!-- gitmedic:dashboard hold 4 --> hold #4: do not merge it automatically"


# ----------------------------------------------------------------------------- offered


@pytest.mark.parametrize(
    ("phase", "strategy", "verbs"),
    [
        (Phase.PR_OPENED, "playbook", ("hold", "retry")),
        (Phase.GATED, "llm", ("hold", "retry")),
        (Phase.AWAITING_APPROVAL, "bisect", ("hold", "retry")),
        (Phase.AWAITING_APPROVAL, "revert", ("hold",)),  # a revert PR names no loop incident
        (Phase.MERGED, "playbook", ("revert",)),
        (Phase.SYNCED, "playbook", ("revert",)),
        (Phase.COMMITTED, "playbook", ("revert",)),
        (Phase.UNDOING, "playbook", ()),
        (Phase.RESTORED, "playbook", ()),  # merged then undone: retry would refuse
        (Phase.REJECTED, "playbook", ()),
        (Phase.COMMITTED, "memory", ()),  # a memory PR is no fix to retry or revert
        (Phase.SYNCED, "watch", ("revert",)),  # a person's merge, being verified
        (Phase.AWAITING_APPROVAL, "watch", ()),  # its revert offered: the person's PR is theirs
    ],
)
def test_each_phase_offers_what_the_command_would_do(
    tmp_path: Path, phase: Phase, strategy: str, verbs: tuple[str, ...]
) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.create(plan("t-1", "inc", 1, strategy), 0.0)
    record(journal, "t-1", [(Phase.PR_OPENED, 0, {"pr": 7}), (phase, 1, {})])
    (state,) = journal.transactions()
    assert controls_of(state) == tuple(Control(v, 7) for v in verbs)


def test_a_transaction_without_a_pr_offers_nothing(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.create(plan("t-1", "inc", 1), 0.0)
    assert controls_of(journal.transactions()[0]) == ()


# ----------------------------------------------------------------------------- ticks


def test_only_a_marked_box_turned_from_unticked_to_ticked_counts() -> None:
    before = f"{HOLD_4}\n- [ ] <!-- gitmedic:dashboard retry 4 --> retry"
    after = before.replace("[ ] <!-- gitmedic:dashboard hold", "[x] <!-- gitmedic:dashboard hold")
    assert newly_ticked(before, after) == (Control("hold", 4),)
    assert newly_ticked(after, after) == ()  # ticked before already: no new tick
    assert newly_ticked(after, before) == ()  # unticking acts on nothing


def test_a_box_a_person_adds_or_types_is_not_gitmedics() -> None:
    added = f"{HOLD_4}\n- [x] <!-- gitmedic:dashboard revert 4 --> revert"
    typed = f"{HOLD_4}\n- [x] hold #4\n- [x] retry #4 <!-- gitmedic:dashboard retry 4 -->"
    unknown = "- [ ] <!-- gitmedic:dashboard merge 4 -->"
    assert newly_ticked(HOLD_4, added) == ()  # never rendered unticked by gitmedic
    assert newly_ticked(HOLD_4, typed) == ()  # free text, or the marker after the words
    assert ticked(unknown) == {}  # a verb the dashboard never offers
    assert ticked("- [ ] <!-- gitmedic:dashboard hold 0 -->") == {}


def test_ticks_come_out_hold_first_whatever_their_order_in_the_body() -> None:
    before = "- [ ] <!-- gitmedic:dashboard retry 4 -->\n" + HOLD_4
    after = before.replace("[ ]", "[x]")
    assert newly_ticked(before, after) == (Control("hold", 4), Control("retry", 4))


# ----------------------------------------------------------------------------- acting


@dataclass
class Desk:
    world: Scene
    actions: FakeActions
    desk: DashboardDesk
    keeper: DashboardKeeper
    number: int

    def body(self) -> str:
        return self.world.forge.get_issue(self.number).body

    def tick(self, box: str, by: str, *, before: str | None = None) -> tuple[str, str]:
        """``by`` ticks ``box`` (a line of the body); returns (result, the body after)."""
        start = self.body() if before is None else before
        assert box in start, box
        after = start.replace(box, box.replace("- [ ]", "- [x]", 1))
        self.world.forge.edit_issue_body(self.number, after)
        edit = DashboardEdit(self.number, BOT_LOGIN, by, start, after)
        return handle_edit(self.world.forge, self.actions, self.desk, edit, BOT_LOGIN), after

    def replies(self) -> dict[str, str]:
        return {
            c.topic or "": c.body.split("\n", 1)[1]  # without the topic marker's line
            for c in self.world.forge.list_comments(self.number)
            if c.author == BOT_LOGIN
        }


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    world = scene(tmp_path)
    journal = journal_with_history(tmp_path / "journal.sqlite")
    keeper = DashboardKeeper(world.forge)

    def view() -> DashboardView:
        return DashboardView(tuple(journal.transactions()))

    keeper.update(view())
    assert keeper.issue is not None
    return Desk(world, FakeActions(), DashboardDesk([(view, keeper)]), keeper, keeper.issue.number)


def test_a_writer_ticks_hold_it_runs_answers_and_the_box_is_cleared(desk: Desk) -> None:
    result, ticked_body = desk.tick(HOLD_4, "wendy")
    assert result == "dashboard boxes ticked by wendy: hold #4"
    assert desk.actions.calls == ["hold #4"]
    (reply,) = desk.replies().values()
    assert reply.startswith("> /gitmedic hold on #4\n\nhold done for #4.")
    assert "- [x]" in ticked_body and "- [x]" not in desk.body()
    assert HOLD_4 in desk.body()  # rendered again from the journal, unticked


def test_a_person_without_write_gets_the_commands_refusal_and_nothing_runs(desk: Desk) -> None:
    result, _ = desk.tick(HOLD_4, "rita")
    assert desk.actions.calls == []
    replies = desk.replies()
    assert list(replies) == ["command-refused:rita"]  # the topic a command's refusal has
    expected = refusal("rita", "hold", Permission.WRITE, Permission.READ)
    assert expected in replies["command-refused:rita"]
    assert "- [x]" not in desk.body()  # cleared all the same
    assert result == "dashboard boxes ticked by rita: hold #4"


def test_the_editor_is_the_actor_not_the_issues_author(desk: Desk) -> None:
    # The dashboard is gitmedic's own issue: were its author the actor, anyone could act.
    desk.tick(HOLD_4, "trish")
    assert desk.actions.calls == []
    assert "Sorry @trish" in desk.replies()["command-refused:trish"]


def test_the_tick_and_the_comment_take_the_same_path(desk: Desk) -> None:
    desk.actions.refuse["hold"] = "#4 is merged; nothing to hold."
    desk.tick(HOLD_4, "maria")
    (tick_reply,) = desk.replies().values()
    world = desk.world
    comment = CommentEvent("created", world.bot_pr, True, 77, "maria", "/gitmedic hold")
    handle_comment(world.forge, desk.actions, comment)
    (comment_reply,) = [c.body for c in world.forge.list_comments(world.bot_pr)]
    assert desk.actions.calls == ["hold #4", f"hold #{world.bot_pr}"]
    tail = "\n\n#4 is merged; nothing to hold."
    assert tick_reply.endswith(tail) and comment_reply.endswith(tail)


def test_gitmedics_own_edit_and_an_edit_of_another_issue_act_on_nothing(desk: Desk) -> None:
    body = desk.body()
    after = body.replace(HOLD_4, HOLD_4.replace("[ ]", "[x]"))
    forge, actions = desk.world.forge, desk.actions
    own = DashboardEdit(desk.number, BOT_LOGIN, BOT_LOGIN, body, after)
    assert handle_edit(forge, actions, desk.desk, own, BOT_LOGIN) == "gitmedic's own edit"
    theirs = DashboardEdit(desk.number, "wendy", "wendy", body, after)  # a person's issue
    result = handle_edit(forge, actions, desk.desk, theirs, BOT_LOGIN)
    assert result == f"#{desk.number} is not gitmedic's dashboard"
    unmarked = DashboardEdit(desk.number, BOT_LOGIN, "wendy", HOLD_4, HOLD_4.replace("[ ]", "[x]"))
    assert "not gitmedic's dashboard" in handle_edit(forge, actions, desk.desk, unmarked, BOT_LOGIN)
    nobody = DashboardEdit(desk.number, BOT_LOGIN, None, body, after)
    assert handle_edit(forge, actions, desk.desk, nobody, BOT_LOGIN).startswith("edit without")
    assert actions.calls == [] and desk.replies() == {}


def test_a_box_the_journal_does_not_offer_is_answered_and_not_run(desk: Desk) -> None:
    # A writer pastes gitmedic's marker for a PR the dashboard never offered, then ticks it.
    forged = "- [ ] <!-- gitmedic:dashboard revert 99 --> revert #99"
    planted = desk.body().replace(HOLD_4, f"{HOLD_4}\n{forged}")
    desk.world.forge.edit_issue_body(desk.number, planted)
    result, _ = desk.tick(forged, "wendy", before=planted)
    assert desk.actions.calls == []
    assert result == "dashboard boxes ticked by wendy: nothing"
    (reply,) = desk.replies().values()
    assert "does not offer revert #99 now" in reply and "Nothing was done" in reply
    assert "revert 99" not in desk.body()  # the dashboard is the journal's again


def test_a_delivery_handled_again_acts_once(desk: Desk) -> None:
    body = desk.body()
    after = body.replace(HOLD_4, HOLD_4.replace("[ ]", "[x]"))
    edit = DashboardEdit(desk.number, BOT_LOGIN, "wendy", body, after)
    forge = desk.world.forge
    handle_edit(forge, desk.actions, desk.desk, edit, BOT_LOGIN)
    assert handle_edit(forge, desk.actions, desk.desk, edit, BOT_LOGIN) == "this edit was answered"
    assert desk.actions.calls == ["hold #4"]


def test_two_boxes_in_one_edit_run_in_order_in_one_reply(desk: Desk) -> None:
    body = desk.body()
    after = body.replace("- [ ] <!-- gitmedic:dashboard", "- [x] <!-- gitmedic:dashboard")
    edit = DashboardEdit(desk.number, BOT_LOGIN, "wendy", body, after)
    handle_edit(desk.world.forge, desk.actions, desk.desk, edit, BOT_LOGIN)
    assert desk.actions.calls == ["hold #4", "retry #4", "revert #1", "revert #5"]
    (reply,) = desk.replies().values()
    assert reply.count("> /gitmedic ") == 4


def test_the_issues_handler_reads_the_edit_from_githubs_payload(desk: Desk) -> None:
    world = desk.world
    deps = Deps(world.forge, desk.actions, lambda sha: (), ("",), dashboard=desk.desk)
    body = desk.body()
    after = body.replace(HOLD_4, HOLD_4.replace("[ ]", "[x]"))
    payload = payloads.issue_edited(desk.number, BOT_LOGIN, "maria", body, after)
    opened = {**payload, "action": "opened"}
    assert on_issues(opened, deps) == "issues opened: nothing to do"
    assert on_issues(payload, Deps(world.forge, desk.actions, lambda sha: (), ("",))) == (
        "no dashboard is kept here"
    )
    assert desk.actions.calls == []
    assert on_issues(payload, deps) == "dashboard boxes ticked by maria: hold #4"
    assert desk.actions.calls == ["hold #4"]
