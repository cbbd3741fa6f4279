"""``serve`` over several apps: each app's journal in its own folder, and the webhook's verbs
routed to the app they concern (bot.serve_apps)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from gitmedic.bot.service.apps import AppsActions, app_state_dir
from gitmedic.bot.service.live_actions import LiveActions


class Recorder:
    """The verbs of one app's LiveActions, recorded; ``prs`` are its transactions' PRs."""

    def __init__(self, app: str, prs: tuple[int, ...] = ()) -> None:
        self.app, self.calls = app, cast(list[str], [])
        txns = [SimpleNamespace(pr=pr) for pr in prs]
        self.journal = SimpleNamespace(transactions=lambda app: txns if app == self.app else [])

    def __getattr__(self, verb: str) -> Any:
        return lambda *args: self.calls.append(f"{verb}{args}") or f"{self.app}: {verb}"


def apps(*recorders: Recorder, changed: tuple[str, ...] = ()) -> AppsActions:
    each = cast(list[LiveActions], list(recorders))
    return AppsActions(each, [f"apps/{r.app}" for r in recorders], lambda sha: changed)


def test_one_app_keeps_the_state_dir_several_get_a_folder_each(tmp_path: Path) -> None:
    assert app_state_dir(tmp_path, "shop", 1) == tmp_path
    assert app_state_dir(tmp_path, "shop", 2) == tmp_path / "apps" / "shop"


def test_a_command_goes_to_the_app_whose_transaction_opened_the_pr() -> None:
    dev, prod = Recorder("dev", prs=(3,)), Recorder("prod", prs=(7,))
    actions = apps(dev, prod)
    assert actions.approve(7) == "prod: approve"
    assert actions.hold(3) == "dev: hold"
    assert actions.explain(99) == "dev: explain", "not the bot's PR: the first app answers"
    assert (dev.calls, prod.calls) == (["hold(3,)", "explain(99,)"], ["approve(7,)"])


def test_a_persons_merge_is_watched_by_the_apps_whose_folder_it_changed() -> None:
    dev, prod, qa = Recorder("dev"), Recorder("prod"), Recorder("qa")
    apps(dev, prod, qa, changed=("apps/prod/web.yaml", "README.md")).watch_merge(5, "abc")
    assert (dev.calls, prod.calls, qa.calls) == ([], ["watch_merge(5, 'abc')"], [])
