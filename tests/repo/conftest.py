"""Hermetic git for repo tests: no user or system config (signing, hooks, aliases)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.reconciler.git import Git
from tests.conftest import APPS, isolate_git


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


MakeRepo = Callable[..., Git]


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """A fresh repo holding copies of real app files (relative to tests/fixtures/data/apps)."""

    def make(*app_files: str, name: str = "repo") -> Git:
        git = Git.init(tmp_path / name)
        for rel in app_files:
            target = git.root / "apps" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(APPS / rel, target)
        if app_files:
            git.commit("baseline: upstream manifests", ".")
        return git

    return make
