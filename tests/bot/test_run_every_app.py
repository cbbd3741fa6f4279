"""``gitmedic run`` acts on every app of the config, each with its own incidents, attempts and
lease; ``--app NAME`` picks one. Through the real command (subprocess), on the sim and the
local forge: a critical fault committed into one app of many is fixed by a pull request of
that app only, and no file of another app changes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import inject
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.conftest import APPS

BOUTIQUE = APPS / "online-boutique" / "release" / "kubernetes-manifests.yaml"
WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
        - name: web
          image: nginx:1.27.{minor}
          ports: [{{containerPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: 8080}}]
"""


def gitmedic(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gitmedic", "run", str(repo), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)


def config(names: list[str]) -> str:
    apps = "".join(f"  - {{name: {n}, path: apps/{n}, namespace: {n}}}\n" for n in names)
    return f"version: 1\napps:\n{apps}"


def repo_of(tmp_path: Path, names: list[str], write: Any) -> Path:
    repo = tmp_path / "repo"
    for name in names:
        (repo / "apps" / name).mkdir(parents=True)
        write(repo / "apps" / name, name)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(config(names))
    init_repo(repo)
    return repo


def changed_since(repo: Path, rev: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "diff", "--name-only", rev, "main", "--", ".", ":!.gitmedic"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def fix_prs(repo: Path) -> list[dict[str, Any]]:
    listed = subprocess.run(
        [sys.executable, "-m", "gitmedic", "prs", str(repo), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [p for p in json.loads(listed)["prs"] if "/attempt-" in p["branch"]]


@pytest.mark.integration
def test_four_copies_of_an_app_and_a_fault_in_the_second(tmp_path: Path) -> None:
    names = [f"shop-{i}" for i in range(1, 5)]

    def copy(folder: Path, name: str) -> None:
        shutil.copy(BOUTIQUE, folder / "kubernetes-manifests.yaml")

    repo = repo_of(tmp_path, names, copy)
    snapshot = load_desired(repo / "apps/shop-2", namespace="shop-2").snapshot
    inject("bad-image", repo, snapshot, target="productcatalogservice")
    broken = commit_all(repo, "bad-image: a release nobody pushed")
    run = gitmedic(repo, "--once", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert report["healthy"] is True
    assert [a["app"] for a in report["apps"]] == names
    (fixed,) = [a for a in report["apps"] if a["incidents"]]
    assert fixed["app"] == "shop-2"
    (pr,) = fix_prs(repo)
    assert pr["branch"].startswith("gitmedic/shop-2-") and pr["state"] == "merged", pr
    assert changed_since(repo, broken) == ["apps/shop-2/kubernetes-manifests.yaml"]
    (line,) = [ln for ln in run.stderr.splitlines() if "starting:" in ln]
    assert "forge local" in line and "cluster sim" in line and "4 apps: shop-1 (shop-1)" in line


@pytest.mark.integration
def test_twenty_apps_a_fault_in_one_and_app_picks_one(tmp_path: Path) -> None:
    names = [f"app-{i:02}" for i in range(1, 21)]

    def web(folder: Path, name: str) -> None:
        (folder / "web.yaml").write_text(WEB.format(ns=name, minor=int(name[-2:]) % 3))

    repo = repo_of(tmp_path, names, web)
    file = repo / "apps/app-17/web.yaml"
    file.write_text(file.read_text().replace("targetPort: 8080", "targetPort: 9090"))
    broken = commit_all(repo, "app-17: the service's port")
    one = gitmedic(repo, "--once", "--json", "--app", "app-03")
    assert one.returncode == 0, one.stderr[-3000:]
    assert json.loads(one.stdout) == {"healthy": True, "incidents": []}, "one app's report"
    assert "engine the simulator, 1 app: app-03 (app-03)" in one.stderr
    assert fix_prs(repo) == [], "--app app-03 left app-17 alone"
    run = gitmedic(repo, "--once", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    assert [a["app"] for a in report["apps"]] == names and report["healthy"] is True
    fixed = [a["app"] for a in report["apps"] if any(i["transactions"] for i in a["incidents"])]
    assert fixed == ["app-17"], "that one fixed, no other touched"
    (pr,) = fix_prs(repo)
    assert pr["branch"].startswith("gitmedic/app-17-"), pr
    assert changed_since(repo, broken) == ["apps/app-17/web.yaml"]
    unknown = gitmedic(repo, "--once", "--app", "nope")
    assert unknown.returncode == 2
    assert "--app nope: no such app in .gitmedic/config.yaml" in unknown.stderr


@pytest.mark.integration
def test_the_start_line_lists_every_app_and_marks_one_it_cannot_deploy(tmp_path: Path) -> None:
    def app(folder: Path, name: str) -> None:
        if name == "broken":
            (folder / "web.yaml").write_text("apiVersion: v1\nkind: [ConfigMap\n")
        else:
            (folder / "web.yaml").write_text(WEB.format(ns=name, minor=1))

    repo = repo_of(tmp_path, ["web", "broken", "api"], app)
    run = gitmedic(repo, "--once", "--json")
    assert run.returncode == 1, run.stderr[-3000:]
    (line,) = [ln for ln in run.stderr.splitlines() if "starting:" in ln]
    assert "forge local" in line and "cluster sim" in line
    listed = "3 apps: web (web), broken (broken; not deployable: apps/broken/web.yaml:"
    assert listed in line and line.endswith("), api (api)"), line
    assert "gitmedic: broken: cannot deploy it: apps/broken/web.yaml:" in run.stderr
    report = json.loads(run.stdout)
    assert [(a["app"], a["healthy"]) for a in report["apps"]] == [
        ("web", True),
        ("api", True),
        ("broken", False),
    ]
