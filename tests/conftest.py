"""Shared fixtures: the real apps (copied from ../shared/data with their licences)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

# the unit tier's guard (no CLI subprocess, built tool or real sleep outside the
# integration marker), pytester for its own test, the GitHub stand-in held to
# GitHub's description (a test whose exchanges drift from it fails), and PostgreSQL
pytest_plugins = [
    "pytester",
    "tests.support.unit_guard",
    "tests.support.github_conformance",
    "tests.support.postgres",  # a real PostgreSQL for the journal's (skips saying why)
]

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


# Where .ci/tools.sh installs helm (its GITMEDIC_TOOLS, as `make test` sets it up).
HELM_CACHE = (
    Path(os.environ.get("GITMEDIC_TOOLS") or Path.home() / ".cache" / "gitmedic-tools")
    / "helm-v3.22.0"
)


@pytest.fixture
def helm_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """helm for the chart tests: on PATH, else the tool dir `make test` installs it into.

    A missing helm fails the test with the reason: a skipped Helm test proves nothing.
    """
    if shutil.which("helm") is None:
        if not (HELM_CACHE / "helm").is_file():
            pytest.fail(f"helm is not on PATH nor at {HELM_CACHE}/helm: install helm v3.22.0")
        monkeypatch.setenv("PATH", f"{HELM_CACHE}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("GITMEDIC_HELM", raising=False)


@pytest.fixture(autouse=True)
def no_cluster_version() -> Iterator[None]:
    """A test that connects a cluster records its version for the process's chart renders
    (:mod:`gitmedic.reconciler.manifests.kube_version`): forgotten after it."""
    from gitmedic.reconciler.manifests.kube_version import forget_cluster_version

    yield
    forget_cluster_version()


@pytest.fixture(autouse=True)
def no_adopted_config() -> Iterator[None]:
    """``run``/``serve`` in the process adopt the discovered apps of a repository without a
    config (:mod:`gitmedic.reconciler.manifests.app_charts`): forgotten after the test."""
    from gitmedic.reconciler.manifests.app_charts import forget_adopted

    yield
    forget_adopted()
