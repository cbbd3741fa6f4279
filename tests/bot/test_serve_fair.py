"""``serve --repos``: one monitor steps every repository once a tick, in an order that
rotates, and a repository whose step fails does not stop the others (bot.service.fair,
bot.service.wiring.wire_repos over two local repositories on the sim)."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.fair import EveryStepFailed, Rotation, fair_tick
from gitmedic.bot.service.repos import repo_state_dir
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.shards import Shards, ShardSettings
from gitmedic.bot.service.wiring import RepoWorld, Served, wire_repos
from gitmedic.reconciler.leases.app_lease import ShardLease
from tests.bot.service_kit import SECRET
from tests.bot.test_run_every_app import WEB, repo_of
from tests.leases.fake_leases import FakeLeases

NAMES = ("alice/shop", "alice/blog")


def test_each_tick_takes_every_item_once_starting_one_further_along() -> None:
    rotation = Rotation(["a", "b", "c"])
    orders = [rotation.order() for _ in range(4)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert Rotation([]).order() == []


def test_a_failing_item_is_logged_and_the_others_still_step(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stepped: list[str] = []

    def step(name: str) -> None:
        if name == "b":
            raise RuntimeError("the clone cannot be fetched")
        stepped.append(name)

    rotation = Rotation(["a", "b", "c"])
    assert fair_tick(rotation, step, str) == ["b"]
    assert fair_tick(rotation, step, str) == ["b"]
    assert stepped == ["a", "c", "c", "a"]
    assert "b: monitor step failed" in caplog.text
    with pytest.raises(EveryStepFailed, match="every repository's step failed: b"):
        fair_tick(Rotation(["b"]), step, str)


def two_repos(tmp_path: Path) -> list[RepoWorld]:
    worlds = []
    for name in NAMES:
        short = name.split("/")[1]

        def web(folder: Path, app: str) -> None:
            (folder / "web.yaml").write_text(WEB.format(ns=app, minor=1))

        repo = repo_of(tmp_path / short, [short], web)
        state = repo_state_dir(tmp_path / "state", name)
        worlds.append(RepoWorld(LocalForge(repo), repo, lambda: None, name, state))
    return worlds


def served(tmp_path: Path, **flags: Any) -> Served:
    one_repo = {"path": None, "namespace": None, "app": None, "watch": None}
    args = argparse.Namespace(forge="local", cluster="sim", interval=10.0, **one_repo, **flags)
    settings = ServeSettings(SECRET, tmp_path / "state", tmp_path)
    return wire_repos(settings, args, {}, two_repos(tmp_path))


def stepped_repos(done: Served) -> list[str]:
    """Which repository's app each step of the monitor stepped, in order."""
    order: list[str] = []

    def recorded(name: str, step: Callable[[float], None]) -> Callable[[float], None]:
        def stepped(interval: float) -> None:
            order.append(name)
            step(interval)

        return stepped

    for repo in done.repos:
        for app in repo.apps:
            app.step = recorded(repo.name, app.step)  # type: ignore[method-assign]
    return order


def test_the_monitor_steps_both_repositories_each_tick_neither_always_first(
    tmp_path: Path,
) -> None:
    done = served(tmp_path)
    order = stepped_repos(done)
    for _ in range(3):
        assert done.monitor.step_once()
    assert order == [*NAMES, *reversed(NAMES), *NAMES]
    assert [r.name for r in done.repos] == list(NAMES)
    assert {c.app for c in done.configs} == {"shop", "blog"}
    metrics = done.service.metrics.render().decode()
    assert 'gitmedic_app_incidents_open{app="alice/shop/shop"} 0.0' in metrics


def test_a_repository_whose_step_fails_does_not_stop_the_other(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    done = served(tmp_path)
    order = stepped_repos(done)
    shop, blog = done.repos

    def unreachable() -> None:
        raise OSError("git fetch: the remote hung up")

    shop.lock.fetch = unreachable  # acquired before each of shop's steps: it fails there
    assert done.monitor.step_once(), "one repository stepped: the tick made progress"
    assert done.monitor.step_once()
    assert order == ["alice/blog", "alice/blog"]
    assert "alice/shop: monitor step failed" in caplog.text
    blog.lock.fetch = unreachable
    with caplog.at_level(logging.ERROR):
        assert not done.monitor.step_once(), "no repository stepped: the tick failed"


def test_shard_leases_name_each_app_by_its_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    real = Shards.of

    def of(settings: ShardSettings, apps: list[str], holder: str, busy: Any) -> Shards:
        asked.append(list(apps))
        return real(settings, apps, holder, busy, api=FakeLeases())

    monkeypatch.setattr(Shards, "of", of)
    done = served(tmp_path, shard_leases="bots", shard_lease_seconds=None)
    assert asked == [["alice/shop/shop", "alice/blog/blog"]]
    leases = [loop.lease for loop in done.loops if isinstance(loop.lease, ShardLease)]
    names = [(lease.shard, lease.journal_lease.app) for lease in leases]
    assert names == [("alice/shop/shop", "shop"), ("alice/blog/blog", "blog")]
