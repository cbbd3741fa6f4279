"""Two apps in one namespace, one of whose kustomization is broken: the other cannot be told
apart from it. Through the real ``gitmedic`` command (subprocess, sim, local forge): ``run``
says which app does not render and where, and never reports the other healthy (exit 1, an
``error`` in ``--json``); ``detect`` exits 2 on the broken kustomization."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gitmedic.sim.faults.git import init_repo
from tests.bot.cli_world import serving, until

CONFIG = """version: 1
apps:
  - {name: dev, path: apps/dev, namespace: team}
  - {name: staging, path: apps/staging, namespace: team}
"""
WEB = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27.1
          ports: [{containerPort: 8080}]
"""
KUSTOMIZATION = "kind: Kustomization\nnamePrefix: {env}-\nresources:\n  - web.yaml\n"
WHERE = "apps/staging/kustomization.yaml:5: resources: 'gone.yaml' is not a file or folder"


def _repo(tmp_path: Path) -> Path:
    """dev and staging overlays in namespace ``team``; staging's names a file that is gone."""
    repo = tmp_path / "repo"
    for env in ("dev", "staging"):
        (repo / "apps" / env).mkdir(parents=True)
        (repo / "apps" / env / "web.yaml").write_text(WEB)
        (repo / "apps" / env / "kustomization.yaml").write_text(KUSTOMIZATION.format(env=env))
    with (repo / "apps" / "staging" / "kustomization.yaml").open("a") as broken:
        broken.write("  - gone.yaml\n")
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(CONFIG)
    init_repo(repo)
    return repo


def _gitmedic(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gitmedic", *map(str, argv)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.integration
def test_run_of_an_app_beside_a_neighbour_that_does_not_render(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    argv = ("--app", "dev", "--cluster", "sim", "--forge", "local", "--once", "--json")
    run = _gitmedic("run", repo, *argv)
    assert run.returncode == 1, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert report["healthy"] is False and report["incidents"] == []
    assert "cannot tell app dev's objects apart" in report["error"]
    assert f"staging does not render ({WHERE}" in report["error"]
    assert "gitmedic: dev: cannot tell app dev's objects apart" in run.stderr


@pytest.mark.integration
def test_run_of_both_apps_says_each_one_s_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    run = _gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    assert run.returncode == 1, run.stderr[-3000:]
    apps = {a["app"]: a for a in json.loads(run.stdout)["apps"]}
    assert apps["staging"]["healthy"] is False and WHERE in apps["staging"]["error"]
    assert apps["dev"]["healthy"] is False
    assert f"staging does not render ({WHERE}" in apps["dev"]["error"]


@pytest.mark.integration
def test_detect_of_the_repository_is_an_error_naming_the_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    done = _gitmedic("detect", repo, "--format", "json")
    assert done.returncode == 2, done.stderr[-3000:]
    (error,) = json.loads(done.stdout)["errors"]
    assert (error["file"], error["line"]) == ("apps/staging/kustomization.yaml", 5)


@pytest.mark.integration
def test_serve_shows_the_app_judged_partly_in_its_metrics(tmp_path: Path) -> None:
    """serve logs why once; /metrics keeps saying it, per app, for as long as it lasts."""
    repo = _repo(tmp_path)
    with serving(repo, interval=1.0) as served:

        def scraped() -> str:
            return httpx.get(f"{served.url}/metrics", timeout=10).text

        assert until(lambda: 'gitmedic_app_judged_partly{app="dev"}' in scraped(), 120)
        text = scraped()
    assert 'gitmedic_app_judged_partly{app="dev"} 1.0' in text, text
    assert 'gitmedic_app_incidents_open{app="dev"} 0.0' in text, "no incident on a neighbour's"
