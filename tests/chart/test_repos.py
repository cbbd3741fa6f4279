"""The chart's ``repos``: several repositories in one install, rendered into the service
config ``gitmedic serve --repos`` reads (GITMEDIC_REPOS), validated as gitmedic does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.service.repos import RepoEntry, load_repos
from tests.chart.conftest import Helm, one, values_file

pytestmark = pytest.mark.integration


def _pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    template: dict[str, Any] = one(objs, "Deployment")["spec"]["template"]
    return template


def test_repos_render_the_service_config_the_pod_reads(helm: Helm, tmp_path: Path) -> None:
    objs = helm.render("repos")
    config = one(objs, "ConfigMap")
    assert config["metadata"]["name"] == "gitmedic-repos"
    listed = tmp_path / "repos.yaml"
    listed.write_text(config["data"]["repos.yaml"])
    assert load_repos(listed, "github") == [
        RepoEntry("acme/shop", "acme/shop", line=2),
        RepoEntry("acme/platform", "acme/platform", "deploy/web", "web", line=3),
    ]
    pod = _pod(objs)
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GITMEDIC_REPOS"] == "/etc/gitmedic/repos/repos.yaml"
    assert "GITHUB_REPOSITORY" not in env, "each repository is an entry of the list"
    mount = {m["name"]: m for m in container["volumeMounts"]}["repos"]
    assert mount == {"name": "repos", "mountPath": "/etc/gitmedic/repos", "readOnly": True}
    volume = {v["name"]: v for v in pod["spec"]["volumes"]}["repos"]
    assert volume["configMap"] == {"name": "gitmedic-repos"}
    assert pod["metadata"]["annotations"]["checksum/repos"]  # a new list restarts the pod


def test_without_repos_the_one_repository_is_served_as_before(helm: Helm) -> None:
    objs = helm.render("app-argocd-cr")
    assert not [o for o in objs if o["kind"] == "ConfigMap"]
    (container,) = _pod(objs)["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["GITHUB_REPOSITORY"] == "acme/shop" and "GITMEDIC_REPOS" not in env


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"github.repository": "acme/shop"}, "set github.repository or repos, not both"),
        ({"github.cloneUrl": "https://x/y.git"}, "github.cloneUrl names one repository"),
        ({"repos[0].paths": "web"}, "additional properties 'paths' not allowed"),
        ({"repos[0].repo": "shop"}, "does not match pattern"),
    ],
)
def test_repos_that_cannot_work_are_refused_at_install(
    helm: Helm, values: dict[str, str], said: str
) -> None:
    sets = [arg for key, value in values.items() for arg in ("--set", f"{key}={value}")]
    result = helm.template("--values", values_file("repos"), *sets)
    assert result.returncode == 1 and said in result.stderr, result.stderr


def test_neither_repository_nor_repos_is_refused(helm: Helm) -> None:
    result = helm.template("--set", "github.appId=1", "--set", "engine.kind=none")
    assert result.returncode == 1
    assert "github.repository (owner/name) is required, or repos" in result.stderr
