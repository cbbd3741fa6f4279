"""Hermetic git for the responder's repos: no user or system config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import isolate_git
from tests.responder.support import AppRepo, app_repo


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)
    monkeypatch.delenv("GITMEDIC_LLM_MODEL", raising=False)
    # litellm prices usage from its bundled map; never from the network in tests.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


MakeApp = Callable[..., AppRepo]


@pytest.fixture
def make_app(tmp_path: Path) -> MakeApp:
    def make(app: str, nodes: int = 0) -> AppRepo:
        return app_repo(tmp_path / "repo", app, nodes)

    return make


def no_llm(**kwargs: Any) -> Any:
    raise AssertionError("the LLM was called for a fault playbooks or bisect must fix")
