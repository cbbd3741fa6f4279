"""kustomize and helm reach nothing outside the repository, by construction.

Every reference of every kustomization field, and of the plugin configs
(``transformers:``, ``generators:``, ``validators:``, as files or inline), must be
a file or folder of the repository outside ``.git/``, else it is refused naming
the file and line before kustomize runs. And the renderers run in an environment
with no way out, so a field the check missed still fetches nothing: no proxy,
git over the file protocol only, ``false`` for ssh, an empty home.

The attacks are real: a local HTTP server counts requests (none may arrive),
a fake ``ssh`` first on ``PATH`` records its calls (none may happen), and the
repositories are committed git work trees read through ``gitmedic detect``.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.reconciler.git import Git
from gitmedic.reconciler.manifests import kustomize
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import isolate_git
from tests.security.local_http import serving

LOCAL = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
data: {a: b}
"""
FETCHED = b"""\
apiVersion: builtin
kind: PatchTransformer
metadata: {name: fetched}
patch: '[{"op": "add", "path": "/data/fetched", "value": "yes"}]'
target: {kind: ConfigMap}
"""


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(FETCHED)))
        self.end_headers()
        self.wfile.write(FETCHED)

    def do_CONNECT(self) -> None:  # a proxy request
        self.hits.append(f"CONNECT {self.path}")
        self.send_response(502)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    with serving(type("Handler", (_Counter,), {"hits": hits})) as url:
        yield url, hits


@pytest.fixture
def fake_ssh(tmp_path: Path) -> tuple[Path, Path]:
    """A folder holding an ``ssh`` that records its arguments, and the record."""
    folder, record = tmp_path / "bin", tmp_path / "ssh-calls"
    folder.mkdir()
    (folder / "ssh").write_text(f'#!/bin/sh\necho "$@" >> {record}\nexit 255\n')
    (folder / "ssh").chmod(0o755)
    return folder, record


def repo_with(tmp_path: Path, kustomization: str, **files: str) -> Path:
    root = tmp_path / "repo"
    app = root / "apps" / "app"
    app.mkdir(parents=True)
    (app / "local.yaml").write_text(LOCAL)
    (app / "kustomization.yaml").write_text(kustomization)
    for name, text in files.items():
        (app / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (app / name.replace("__", "/")).write_text(text)
    Git.init(root).commit("app", ".")
    return root


def detect(path: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, object], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def inline_transformer(url: str) -> str:
    return (
        "resources:\n- local.yaml\n"
        "transformers:\n"
        "- |-\n"
        "  apiVersion: builtin\n"
        "  kind: PatchTransformer\n"
        "  metadata: {name: remote}\n"
        f"  path: {url}/x\n"
    )


@pytest.mark.integration
def test_an_inline_transformer_path_on_a_server_is_refused_and_never_fetched(
    tmp_path: Path, server: tuple[str, list[str]]
) -> None:
    url, hits = server
    root = repo_with(tmp_path, inline_transformer(url))

    code, out, _ = detect(root / "apps")

    assert hits == []
    assert code == 2
    (error,) = out["errors"]  # type: ignore[misc]
    assert (error["file"], error["line"]) == ("apps/app/kustomization.yaml", 8)
    assert f"transformers: '{url}/x' is a remote reference" in error["message"]


@pytest.mark.integration
def test_a_user_at_host_reference_never_runs_ssh(
    tmp_path: Path, fake_ssh: tuple[Path, Path]
) -> None:
    folder, record = fake_ssh
    root = repo_with(tmp_path, "resources:\n- local.yaml\n- someone@git.invalid:org/repo\n")
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}

    code, out, _ = detect(root / "apps", env)

    assert not record.exists(), record.read_text()
    assert code == 2
    (error,) = out["errors"]  # type: ignore[misc]
    assert (error["file"], error["line"]) == ("apps/app/kustomization.yaml", 3)
    assert "'someone@git.invalid:org/repo' is not a file or folder of the repository" in str(
        error["message"]
    )


PLUGIN_FILE = """\
apiVersion: builtin
kind: PatchStrategicMergeTransformer
metadata: {name: from-a-file}
paths:
- ../../.git/config
"""


@pytest.mark.parametrize(
    "kustomization, files, where, said",
    [
        (
            "resources: [local.yaml]\ntransformers:\n- '{kind: PatchTransformer, path: x/y}'\n",
            {},
            ("apps/app/kustomization.yaml", 3),
            "transformers: '{kind: PatchTransformer, path: x/y}' is not a file or folder",
        ),
        (
            "resources: [local.yaml]\nconfigMapGenerator:\n- name: c\n"
            "  files: [k=../../.git/config]\n",
            {},
            ("apps/app/kustomization.yaml", 4),
            "configMapGenerator: '../../.git/config' is inside .git/",
        ),
        (
            "resources: [local.yaml]\ntransformers: [plugin.yaml]\n",
            {"plugin.yaml": PLUGIN_FILE},
            ("apps/app/plugin.yaml", 5),
            "plugin config: '../../.git/config'",
        ),
        (
            "resources: [local.yaml]\nopenapi:\n  path: https://127.0.0.1:1/schema.json\n",
            {},
            ("apps/app/kustomization.yaml", 3),
            "openapi: 'https://127.0.0.1:1/schema.json' is a remote reference",
        ),
        (
            "resources: [local.yaml]\nhelmCharts:\n- name: x\n  valuesFile: gone.yaml\n",
            {},
            ("apps/app/kustomization.yaml", 4),
            "helmCharts: 'gone.yaml' is not a file or folder of the repository",
        ),
        (
            "resources: [local.yaml]\nreplacements:\n- path: example.com/org/repo\n",
            {},
            ("apps/app/kustomization.yaml", 3),
            "replacements: 'example.com/org/repo' is a remote reference",
        ),
        (
            "resources: [local.yaml]\ngenerators: [gen]\n",
            {
                "gen__kustomization.yaml": "resources: [cm.yaml]\n",
                "gen__cm.yaml": "kind: ConfigMapGenerator\nenvs: [/etc/passwd]\n",
            },
            ("apps/app/gen/cm.yaml", 2),
            "'/etc/passwd' is an absolute path",
        ),
        (
            "resources: [local.yaml]\nvalidators:\n- |\n  kind: X\n  path: ../../../outside\n",
            {},
            ("apps/app/kustomization.yaml", 5),
            "validators: '../../../outside' is outside the repository",
        ),
    ],
    ids=[
        "one-line-inline-transformer",
        "generator-files",
        "transformer-file",
        "openapi",
        "helm-values",
        "replacements",
        "generator-kustomization",
        "inline-validator",
    ],
)
def test_every_field_is_resolved_in_the_repository(
    tmp_path: Path,
    kustomization: str,
    files: dict[str, str],
    where: tuple[str, int],
    said: str,
) -> None:
    root = repo_with(tmp_path, kustomization, **files)

    state = load_desired(root / "apps" / "app")

    assert [(e.file, e.line) for e in state.errors] == [where], state.errors
    assert said in state.errors[0].message
    assert list(state.snapshot) == []


def test_git_files_in_the_repository_are_refused(tmp_path: Path) -> None:
    root = repo_with(tmp_path, "resources: [local.yaml]\n")
    (root / "kustomization.yaml").write_text(
        "resources: [apps/app/local.yaml]\nconfigMapGenerator:\n- name: c\n  files: [.git/config]\n"
    )

    state = load_desired(root)

    (error,) = state.errors
    assert (error.file, error.line) == ("kustomization.yaml", 4)
    assert "'.git/config' is inside .git/" in error.message


@pytest.mark.integration
def test_a_missed_field_still_reaches_nothing(
    tmp_path: Path,
    server: tuple[str, list[str]],
    fake_ssh: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second wall alone: with the reference check switched off, the bot's proxy
    is not used and git runs no ssh, whatever the kustomization names."""
    url, hits = server
    folder, record = fake_ssh
    monkeypatch.setattr(kustomize, "check_references", lambda *a, **k: [])
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(name, url)
    monkeypatch.setenv("NO_PROXY", "")
    root = repo_with(
        tmp_path,
        "resources:\n- local.yaml\n- someone@git.invalid:org/repo\n"
        "- https://git.invalid/org/repo.git//base\n",
    )

    state = load_desired(root / "apps" / "app")

    assert not record.exists(), record.read_text()
    assert hits == []
    assert state.errors and list(state.snapshot) == []


def test_the_sandbox_environment_has_no_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmedic.reconciler.manifests.render_sandbox import sandbox_env

    for name in ("HTTPS_PROXY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "GIT_SSH_COMMAND"):
        monkeypatch.setenv(name, "x")

    env = sandbox_env(tmp_path)

    assert not {"HTTPS_PROXY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert env["GIT_ALLOW_PROTOCOL"] == "file"
    assert env["GIT_SSH_COMMAND"] == env["GIT_SSH"] == "false"
    assert env["HOME"] == str(tmp_path) and env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["KUBECONFIG"] == os.devnull
    assert sandbox_env(tmp_path, network=True)["HTTPS_PROXY"] == "x"


FILES_GET = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: leak}
data:
  git: {{ .Files.Get ".git/config" | quote }}
  listed: {{ .Files.Glob ".git/**" | len | quote }}
"""


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_chart_at_the_repository_root_cannot_read_git_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: leak\nversion: 0.1.0\n")
    (root / "templates" / "leak.yaml").write_text(FILES_GET)
    Git.init(root).commit("chart", ".")
    assert "[core]" in (root / ".git" / "config").read_text()

    state = load_desired(root)

    assert state.errors == []
    (leak,) = list(state.snapshot)
    assert leak.body["data"] == {"git": "", "listed": "0"}


ARGO = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app, namespace: argocd}
spec:
  source:
    repoURL: https://git.example.com/team/gitops.git
    path: charts/app
    helm:
      valueFiles: [values.yaml, ../../.git/config]
  destination: {namespace: prod}
"""


def test_an_argo_values_file_inside_git_is_refused() -> None:
    from gitmedic.reconciler.manifests.deployed_by import DeployerError, read_deployer

    with pytest.raises(DeployerError) as refused:
        read_deployer(lambda rel: ARGO, "argocd/app.yaml")

    assert str(refused.value) == (
        "argocd/app.yaml: Application app: values file ../../.git/config is inside .git/, "
        "git's own files"
    )


def test_a_helm_values_file_inside_git_is_refused() -> None:
    from gitmedic.reconciler.manifests.helm import ChartSpec, HelmError

    with pytest.raises(HelmError, match=r"'\.\./\.git/config' of chart chart is inside \.git/"):
        ChartSpec("chart", values=("../.git/config",)).values_files()


def test_a_field_path_in_a_plugin_config_is_not_a_file() -> None:
    from gitmedic.reconciler.manifests.kustomize_plugins import plugin_references

    config = (
        "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: labels}\n"
        "labels: {env: dev}\nfieldSpecs:\n- {path: metadata/labels, create: true}\n"
        "---\nkind: ReplacementTransformer\nreplacements:\n- path: r.yaml\n"
        "---\nkind: PatchTransformer\npath: patch.yaml\n"
    )
    assert sorted(plugin_references(config)) == ["patch.yaml", "r.yaml"]
