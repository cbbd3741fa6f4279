"""``serve`` over several apps renders the shared dashboard issue once per monitor step.

The issue shows every app's journal; refreshing it after each app's step read every
journal once per app: O(apps^2) reads a step, 1,000,000 with 1,000 apps
(bench/apps_scale.py). Once per step, after every app stepped, is the same issue."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.dashboard import DashboardKeeper
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.wiring import wire
from tests.bot.service_kit import SECRET
from tests.bot.test_run_every_app import WEB, repo_of


def test_each_monitor_step_reads_each_app_s_journal_for_the_dashboard_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"app-{i}" for i in range(4)]

    def web(folder: Path, name: str) -> None:
        (folder / "web.yaml").write_text(WEB.format(ns=name, minor=1))

    repo = repo_of(tmp_path, names, web)
    args = argparse.Namespace(forge="local", cluster="sim", interval=60.0, path=None,
                              namespace=None, watch=None, app=None)  # fmt: skip
    served = wire(ServeSettings(SECRET, tmp_path / "state", repo), args, {}, LocalForge(repo),
                  repo, lambda: None)  # fmt: skip
    rendered: list[int] = []
    update_all = DashboardKeeper.update_all

    def counted(self: DashboardKeeper, views: list[object], answered: str = "") -> bool:
        rendered.append(len(views))
        return update_all(self, views, answered)  # type: ignore[arg-type]

    monkeypatch.setattr(DashboardKeeper, "update_all", counted)
    for _ in range(2):
        rendered.clear()
        served.monitor.step_once()
        assert rendered == [len(names)], "one render of every app's view per step"
