"""A walk's renders run side by side on a working tree, one at a time on a git revision,
and their results come back in the walk's order; Go renderers run with their collector
off below a ceiling unless the user set their own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests import render_pool
from gitmedic.reconciler.manifests.render_pool import go_env, render_each
from gitmedic.reconciler.manifests.tree import FsTree


class _RevisionTree:
    """Any tree that is not the working tree (a git revision reads through one process)."""


def test_renders_of_a_working_tree_run_side_by_side_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_pool.os, "cpu_count", lambda: 2)
    # each job waits for the other: only two jobs running at once get past the barrier
    both = threading.Barrier(2, timeout=30)

    def job(name: str) -> str:
        both.wait()
        return name

    got = render_each(FsTree(tmp_path), [lambda: job("first"), lambda: job("second")])
    assert got == ["first", "second"]


def test_renders_of_a_revision_run_one_at_a_time_in_the_callers_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(render_pool.os, "cpu_count", lambda: 2)
    threads: list[str] = []

    def job(n: int) -> int:
        threads.append(threading.current_thread().name)
        return n

    got = render_each(_RevisionTree(), [lambda: job(1), lambda: job(2), lambda: job(3)])  # type: ignore[arg-type]
    assert got == [1, 2, 3]
    assert threads == [threading.current_thread().name] * 3


def test_one_core_renders_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_pool.os, "cpu_count", lambda: 1)
    threads: list[str] = []
    render_each(FsTree(tmp_path), [lambda: threads.append(threading.current_thread().name)] * 2)
    assert threads == [threading.current_thread().name] * 2


def test_a_failing_render_raises_as_it_would_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_pool.os, "cpu_count", lambda: 2)

    def broken() -> str:
        raise ValueError("kustomize exploded")

    with pytest.raises(ValueError, match="kustomize exploded"):
        render_each(FsTree(tmp_path), [lambda: "fine", broken])


def test_go_renderers_run_without_their_collector_below_half_the_memory_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    env = go_env({"PATH": "/bin", "KUBECONFIG": "/dev/null"}, 1024)
    assert env == {"PATH": "/bin", "KUBECONFIG": "/dev/null", "GOGC": "off", "GOMEMLIMIT": "512MiB"}
    assert go_env({}, 300)["GOMEMLIMIT"] == "150MiB"  # a smaller cap, a lower ceiling


def test_the_users_own_go_settings_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOGC", "50")
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    # the renderer's sandboxed environment is built from a short list; the setting still reaches it
    assert go_env({"PATH": "/bin"}, 1024) == {"PATH": "/bin", "GOGC": "50"}
