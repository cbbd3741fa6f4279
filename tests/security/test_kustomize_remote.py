"""kustomize fetches nothing remote: remote resources, bases and components are refused.

A real HTTP server on 127.0.0.1 serves a manifest and counts every request. A
kustomization naming it (and git-style remote bases and components) is loaded
through ``gitmedic detect`` in a subprocess, in the work tree and at a
revision: the server sees zero requests and the error names the kustomization
file and line. With ``manifests: {allow_remote_bases: true}`` in the work
tree's config, the same kustomization is rendered from the server.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.reconciler.git import Git
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import isolate_git
from tests.security.local_http import serving

REMOTE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: fetched-from-the-network
data: {a: b}
"""
LOCAL = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
data: {a: b}
"""
CONFIG = """\
version: 1
apps: [{name: app, path: apps/app}]
manifests: {allow_remote_bases: true}
"""


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = REMOTE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/yaml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    with serving(type("Handler", (_Counter,), {"hits": hits})) as url:
        yield url, hits


def repo_with(tmp_path: Path, kustomization: str) -> Path:
    root = tmp_path / "repo"
    app = root / "apps" / "app"
    app.mkdir(parents=True)
    (app / "local.yaml").write_text(LOCAL)
    (app / "kustomization.yaml").write_text(kustomization)
    Git.init(root).commit("app", ".")
    return root


def detect(*argv: str | Path) -> tuple[int, dict[str, list[dict[str, object]]]]:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", *map(str, argv), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.integration
@pytest.mark.parametrize("rev", [None, "HEAD"])
def test_a_remote_resource_is_refused_and_never_fetched(
    tmp_path: Path, server: tuple[str, list[str]], rev: str | None
) -> None:
    url, hits = server
    root = repo_with(tmp_path, f"resources:\n- local.yaml\n- {url}/x.yaml\n")

    code, out = detect(root / "apps", *(["--rev", rev] if rev else []))

    assert hits == []
    assert code == 2
    (error,) = out["errors"]
    assert (error["file"], error["line"]) == ("apps/app/kustomization.yaml", 3)
    assert f"{url}/x.yaml" in str(error["message"]) and "remote" in str(error["message"])
    assert "allow_remote_bases" in str(error["message"])


@pytest.mark.parametrize(
    "field, ref",
    [
        ("resources", "https://127.0.0.1:1/x.yaml"),
        ("resources", "github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v5.0.0"),
        ("resources", "git@github.com:org/repo.git//base"),
        ("resources", "https://github.com/org/repo.git//base?ref=main"),
        ("resources", "example.com/org/repo/base"),
        ("components", "git::https://example.com/org/repo//comp"),
        ("bases", "ssh://git@example.com/org/repo"),
    ],
)
def test_every_remote_form_is_refused_naming_the_file(tmp_path: Path, field: str, ref: str) -> None:
    root = repo_with(tmp_path, f"resources:\n- local.yaml\n{field}:\n- {ref}\n")

    state = load_desired(root / "apps")

    (error,) = state.errors
    assert (error.file, error.line) == ("apps/app/kustomization.yaml", 4)
    assert f"{field}: {ref!r} is a remote reference" in error.message
    assert [o.name for o in state.snapshot] == []


def test_a_remote_base_inside_a_local_base_is_refused_too(tmp_path: Path) -> None:
    root = repo_with(tmp_path, "resources:\n- ../base\n")
    (root / "apps" / "base").mkdir()
    (root / "apps" / "base" / "kustomization.yaml").write_text(
        "resources:\n- https://127.0.0.1:1/x.yaml\n"
    )
    state = load_desired(root / "apps" / "app")
    (error,) = state.errors
    assert error.file == "apps/base/kustomization.yaml" and "remote reference" in error.message


def test_a_resource_through_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    root = repo_with(tmp_path, "resources:\n- local.yaml\n- linked\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kustomization.yaml").write_text("resources: []\n")
    (root / "apps" / "app" / "linked").symlink_to(tmp_path / "outside")
    state = load_desired(root / "apps" / "app")
    messages = [e.message for e in state.errors]
    assert any("'linked' is a symbolic link" in m for m in messages), messages


@pytest.mark.integration
def test_the_config_can_allow_remote_bases(tmp_path: Path, server: tuple[str, list[str]]) -> None:
    url, hits = server
    root = repo_with(tmp_path, f"resources:\n- local.yaml\n- {url}/x.yaml\n")
    (root / ".gitmedic").mkdir()
    (root / ".gitmedic" / "config.yaml").write_text(CONFIG)

    state = load_desired(root / "apps" / "app")

    assert state.errors == []
    assert sorted(o.name for o in state.snapshot) == ["fetched-from-the-network", "local"]
    assert hits == ["/x.yaml"]
