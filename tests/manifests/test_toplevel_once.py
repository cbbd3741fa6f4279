"""Within one detect, each folder's git work tree is asked of git once (it asked four times)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.manifests import tree
from gitmedic.reconciler.manifests.tree import git_toplevel, one_toplevel_per_folder
from tests.manifests.helpers import init_repo


def test_git_is_asked_once_per_folder_inside_and_every_time_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_repo(tmp_path / "repo")
    (tmp_path / "repo/apps").mkdir()
    (tmp_path / "loose").mkdir()
    asked: list[Path] = []
    real = tree.gitcmd.run

    def counting(start: Path, *args: Any, **kw: Any) -> Any:
        asked.append(start)
        return real(start, *args, **kw)

    monkeypatch.setattr(tree.gitcmd, "run", counting)
    with one_toplevel_per_folder():
        answers = [git_toplevel(p) for p in (tmp_path / "repo/apps", tmp_path / "loose") * 3]
    assert len(asked) == 2
    assert answers[0] is not None and answers[0].resolve() == (tmp_path / "repo").resolve()
    assert answers[1] is None and answers == answers[:2] * 3
    git_toplevel(tmp_path / "loose")
    git_toplevel(tmp_path / "loose")
    assert len(asked) == 4  # a long-lived process asks again: a folder may become a repo
