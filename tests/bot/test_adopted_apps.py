"""A repository without a config: the apps ``run``/``serve`` act on are init's, adopted."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from gitmedic.bot.controller.assemble import loop_configs_of
from gitmedic.bot.discover.adopted import adopted_note, discovered_config, repo_apps_config
from gitmedic.reconciler.manifests.app_charts import adopted_config, tree_config
from gitmedic.reconciler.manifests.tree import FsTree, GitTree
from tests.manifests.helpers import commit_all, init_repo, write

DEPLOY = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}\n"
OVERLAY = "resources: [../../base]\nnamespace: {env}\n"
TWO_OVERLAYS = {
    "base/kustomization.yaml": "resources: [deploy.yaml]\n",
    "base/deploy.yaml": DEPLOY,
    "overlays/dev/kustomization.yaml": OVERLAY.format(env="dev"),
    "overlays/prod/kustomization.yaml": OVERLAY.format(env="prod"),
}
CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    "chart/values.yaml": "replicas: 1\n",
    "chart/values-prod.yaml": "replicas: 3\n",
    "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
}


def repo_of(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = write(init_repo(tmp_path / "repo"), files)
    commit_all(repo, "the team's repository")
    return repo


def args(**given: str) -> argparse.Namespace:
    return argparse.Namespace(path=given.get("path"), namespace=given.get("namespace"), app=None)


def test_the_discovered_apps_are_the_ones_init_writes(tmp_path: Path) -> None:
    from gitmedic.bot.discover.apps import discovered_apps

    repo = repo_of(tmp_path, {**TWO_OVERLAYS, **CHART})
    config = discovered_config(repo)
    assert config is not None
    written = yaml.safe_load("apps:\n" + discovered_apps(repo)[0])["apps"]
    assert [(a.name, a.path, a.namespace) for a in config.apps] == [
        (a["name"], a["path"], a["namespace"]) for a in written
    ]
    prod = [a for a in config.apps if a.helm is not None and a.helm.values]
    assert [a.helm.values for a in prod if a.helm] == [("values-prod.yaml",)]


def test_every_revision_without_a_config_reads_the_adopted_apps(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, TWO_OVERLAYS)
    assert tree_config(FsTree(repo)) is None, "nothing adopted yet"
    config = repo_apps_config(repo)
    assert config is not None
    assert [(a.path, a.namespace) for a in config.apps] == [
        ("overlays/dev", "dev"),
        ("overlays/prod", "prod"),
    ]
    assert adopted_config(repo) is config
    assert tree_config(GitTree(repo, "HEAD")) is config
    assert tree_config(FsTree(repo)) is config
    assert tree_config(FsTree(tmp_path)) is None, "another repository's is not"
    assert "acting on the 2 apps discovered" in adopted_note(repo)


def test_run_acts_on_each_discovered_app(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, TWO_OVERLAYS)
    configs = loop_configs_of(repo, args())
    assert [(c.app, c.path, c.namespace) for c in configs] == [
        ("dev", "overlays/dev", "dev"),
        ("prod", "overlays/prod", "prod"),
    ]


def test_path_or_namespace_name_the_one_app_and_nothing_is_adopted(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, TWO_OVERLAYS)
    (config,) = loop_configs_of(repo, args(path="overlays/dev", namespace="dev"))
    assert (config.path, config.namespace) == ("overlays/dev", "dev")
    assert adopted_config(repo) is None
    assert adopted_note(repo) == ""


def test_a_config_file_wins_and_nothing_is_adopted(tmp_path: Path) -> None:
    config = "version: 1\napps: [{name: only, path: overlays/dev, namespace: dev}]\n"
    repo = repo_of(tmp_path, {**TWO_OVERLAYS, ".gitmedic/config.yaml": config})
    found = repo_apps_config(repo)
    assert found is not None and [a.name for a in found.apps] == ["only"]
    assert adopted_config(repo) is None


def test_a_repository_with_nothing_to_discover_is_one_app(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {"README.md": "no manifests\n"})
    assert repo_apps_config(repo) is None
    (config,) = loop_configs_of(repo, args())
    assert (config.app, config.path) == ("repo", "")


@pytest.mark.integration
def test_serve_monitors_each_discovered_app_with_its_own_journal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gitmedic.bot.service.settings import ServeSettings, watched_paths
    from gitmedic.bot.service.wiring import assemble

    repo = repo_of(tmp_path, TWO_OVERLAYS)
    given = {"forge": "local", "cluster": None, "interval": 3600.0, "watch": None}
    caplog.set_level("INFO", logger="gitmedic.bot.service.wiring")
    served = assemble(
        ServeSettings("s3cret", tmp_path / "state", repo),
        argparse.Namespace(**given, path=None, app=None, namespace=None),
        {},
    )
    assert [(lp.config.app, lp.config.path) for lp in served.loops] == [
        ("dev", "overlays/dev"),
        ("prod", "overlays/prod"),
    ]
    for app in ("dev", "prod"):
        assert (tmp_path / "state" / "apps" / app / "journal.sqlite").exists()
    assert watched_paths(repo, ()) == ("overlays/dev", "overlays/prod")
    said = [r.getMessage() for r in caplog.records]
    assert any("acting on the 2 apps discovered in the repository" in m for m in said), said
    assert any(m.endswith("2 apps: dev (dev), prod (prod)") for m in said), said
    assert not (repo / ".gitmedic" / "config.yaml").exists()
