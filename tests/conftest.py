"""Shared fixtures: the real apps (copied from ../shared/data with their licences)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

FIXTURES = Path(__file__).parent / "fixtures"
DATA = FIXTURES / "data"
APPS = DATA / "apps"


@dataclass(frozen=True)
class App:
    name: str
    path: Path  # canonical manifest path
    namespace: str


def real_apps() -> list[App]:
    index = yaml.safe_load((APPS / "INDEX.yaml").read_text())
    return [App(n, APPS / n / v["path"], v["namespace"]) for n, v in sorted(index.items())]


@pytest.fixture(params=real_apps(), ids=lambda a: a.name)
def real_app(request: pytest.FixtureRequest) -> App:
    app: App = request.param
    return app


def isolate_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """git with no user or system config (signing, hooks, aliases): for suites that commit."""
    config = tmp_path_factory.mktemp("gitconfig") / "config"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
