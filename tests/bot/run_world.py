"""A real app from tests/fixtures/data in a git repo, with one fault committed on top."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.cli.main import main
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import inject
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.conftest import APPS

REAL: dict[str, tuple[str, str, str | None]] = {  # app -> (manifest, namespace, a Service)
    "online-boutique": ("release/kubernetes-manifests.yaml", "boutique", "productcatalogservice"),
    "teastore": ("examples/kubernetes/teastore-clusterip.yaml", "teastore", None),
}


def app_repo(tmp: Path, name: str) -> tuple[Path, str, str]:
    """(repo, app path in it, namespace): the app's manifests at a healthy baseline."""
    manifest, namespace, _ = REAL[name]
    repo = tmp / "repo"
    target = repo / "apps" / name / Path(manifest).name
    target.parent.mkdir(parents=True)
    shutil.copy(APPS / name / manifest, target)
    init_repo(repo)
    return repo, f"apps/{name}", namespace


def with_fault(repo: Path, app: str, namespace: str, fault: str, **params: Any) -> str:
    snapshot = load_desired(repo / app, namespace=namespace).snapshot
    inject(fault, repo, snapshot, **params)
    return commit_all(repo, f"{fault}: a bad change")


def run_json(
    repo: Path, app: str, namespace: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, Any]:
    argv = ["run", str(repo), "--path", app, "--namespace", namespace]
    code = main([*argv, "--cluster", "sim", "--forge", "local", "--once", "--json"])
    return code, json.loads(capsys.readouterr().out)


def show(repo: Path, rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
