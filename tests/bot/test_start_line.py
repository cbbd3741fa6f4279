"""No sim against a real forge, and the one line every start logs (bot.start_line)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.controller.start_line import check_cluster_for_forge, kube_context, start_line
from tests.bot.test_serve_github import github

GITMEDIC = (sys.executable, "-m", "gitmedic")


def test_github_takes_kube_by_default_and_refuses_the_sim() -> None:
    assert check_cluster_for_forge("github", None) == "kube"
    assert check_cluster_for_forge("github", "kube") == "kube"
    with pytest.raises(UsageError, match="--forge github needs --cluster kube"):
        check_cluster_for_forge("github", "sim")


def test_the_local_forge_defaults_to_the_sim() -> None:
    assert check_cluster_for_forge("local", None) == "sim"
    assert check_cluster_for_forge("local", "kube") == "kube"


def test_the_start_line_names_forge_repository_cluster_context_engine_and_apps(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: prod-eu\n")
    loops = [
        SimpleNamespace(
            config=SimpleNamespace(app=name, namespace=ns),
            cluster=SimpleNamespace(engine_name="Flux"),
        )
        for name, ns in (("dev", "dev"), ("prod", "shop"))
    ]
    env = {"KUBECONFIG": str(kubeconfig), "GITHUB_REPOSITORY": "acme/deploy"}
    line = start_line("github", object(), tmp_path, "kube", loops, env)
    assert line == (
        "gitmedic: starting: forge github (acme/deploy), cluster kube (context prod-eu), "
        "engine Flux, 2 apps: dev (dev), prod (shop)"
    )
    local = start_line("local", object(), tmp_path, "sim", loops[:1], env)
    assert local.startswith(f"gitmedic: starting: forge local ({tmp_path}), cluster sim, ")


def test_an_app_not_deployable_is_listed_in_its_place_with_why_in_one_line(
    tmp_path: Path,
) -> None:
    configs = [SimpleNamespace(app=n, namespace=n) for n in ("dev", "infra", "prod")]
    loops = [
        SimpleNamespace(config=c, cluster=SimpleNamespace(engine_name="the simulator"))
        for c in (configs[0], configs[2])
    ]
    why = "chart x 1.0 from https://charts.example.com cannot be pulled: offline; vendor it " * 3
    broken = {"infra": why}
    line = start_line("local", object(), tmp_path, "sim", loops, {}, apps=configs, broken=broken)
    assert line.endswith(
        "engine the simulator, 3 apps: dev (dev), infra (infra; not deployable: chart x 1.0 "
        "from https://charts.example.com cannot be pulled: offline), prod (prod)"
    )
    long = {"infra": "x" * 500}
    line = start_line("local", object(), tmp_path, "sim", loops, {}, apps=configs, broken=long)
    assert f"infra (infra; not deployable: {'x' * 159}…), prod (prod)" in line


def test_kube_context_without_a_kubeconfig_is_empty(tmp_path: Path) -> None:
    assert kube_context({"KUBECONFIG": str(tmp_path / "none")}) == ""


@pytest.mark.integration
def test_serve_on_github_without_cluster_never_starts_the_sim(tmp_path: Path) -> None:
    """With no ``--cluster`` serve takes kube, and without a kubeconfig exits 2 saying so;
    asked for the sim it is refused, though the GitHub API listens on 127.0.0.1 (a tunnel
    to the real GitHub would too)."""
    _, env = github(tmp_path)
    served = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "serve",
            "--forge",
            "github",
            "--state-dir",
            str(tmp_path / "state"),
            "--port",
            "0",
        ],
        env={
            **os.environ,
            **env,
            "GITMEDIC_WEBHOOK_SECRET": "s3cret",
            "HOME": str(tmp_path),
            "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
            "GITMEDIC_CLUSTER": "",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert served.returncode == 2, served.stderr[-3000:]
    assert "gitmedic: error: --cluster kube: cannot load kubeconfig" in served.stderr
    assert "simulator" not in served.stderr and "cluster sim" not in served.stderr
    asked = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "serve",
            "--forge",
            "github",
            "--cluster",
            "sim",
            "--state-dir",
            str(tmp_path / "state2"),
        ],
        env={
            **os.environ,
            **env,
            "GITMEDIC_WEBHOOK_SECRET": "s3cret",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert asked.returncode == 2
    assert "--forge github needs --cluster kube" in asked.stderr
    assert not (tmp_path / "state2" / "clone").exists(), "refused before cloning anything"
    assert env["GITHUB_API_URL"].startswith("http://127.0.0.1:"), "a loopback API, refused"


@pytest.mark.integration
def test_run_on_github_refuses_the_sim_though_the_api_is_on_loopback(tmp_path: Path) -> None:
    store, env = github(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", env["GITMEDIC_CLONE_URL"], str(clone)], check=True)
    head = store.git("rev-parse", "main").strip()
    asked = subprocess.run(
        [*GITMEDIC, "run", str(clone), "--forge", "github", "--cluster", "sim", "--once"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert asked.returncode == 2, asked.stderr[-3000:]
    assert "--forge github needs --cluster kube" in asked.stderr
    assert "starting:" not in asked.stderr and not store.pulls
    assert store.git("rev-parse", "main").strip() == head


@pytest.mark.integration
def test_serve_logs_one_start_line_for_every_app(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gitmedic.bot.service.settings import ServeSettings
    from gitmedic.bot.service.wiring import assemble
    from tests.transaction.e2e_world import APP, NAMESPACE, make_repo

    repo = make_repo(tmp_path)
    (repo / ".gitmedic").mkdir(exist_ok=True)
    (repo / ".gitmedic" / "config.yaml").write_text(
        "version: 1\napps:\n"
        f"  - {{name: shop, path: {APP}, namespace: {NAMESPACE}}}\n"
        f"  - {{name: shop-copy, path: {APP}, namespace: {NAMESPACE}-copy}}\n"
    )
    args = argparse.Namespace(
        forge="local",
        cluster=None,
        interval=3600.0,
        path=None,
        app=None,
        namespace=None,
        watch=None,
    )
    caplog.set_level("INFO", logger="gitmedic.bot.service.wiring")
    served = assemble(ServeSettings("s3cret", tmp_path / "state", repo), args, {})
    (line,) = [r.getMessage() for r in caplog.records if "starting:" in r.getMessage()]
    assert line == (
        f"gitmedic: starting: forge local ({repo}), cluster sim, engine the simulator, "
        f"2 apps: shop ({NAMESPACE}), shop-copy ({NAMESPACE}-copy)"
    )
    assert [loop.config.app for loop in served.loops] == ["shop", "shop-copy"]
    assert (tmp_path / "state" / "apps" / "shop-copy" / "journal.sqlite").exists()


@pytest.mark.integration
def test_serve_serves_the_apps_it_can_deploy_and_lists_the_one_it_cannot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gitmedic.bot.service.settings import ServeSettings
    from gitmedic.bot.service.wiring import assemble
    from tests.transaction.e2e_world import APP, NAMESPACE, make_repo

    repo = make_repo(tmp_path)
    (repo / "broken").mkdir()
    (repo / "broken" / "web.yaml").write_text("apiVersion: v1\nkind: [ConfigMap\n")
    (repo / ".gitmedic").mkdir(exist_ok=True)
    (repo / ".gitmedic" / "config.yaml").write_text(
        "version: 1\napps:\n"
        "  - {name: broken, path: broken, namespace: broken}\n"
        f"  - {{name: shop, path: {APP}, namespace: {NAMESPACE}}}\n"
    )
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "a broken app"], check=True)
    given = {"forge": "local", "cluster": None, "interval": 3600.0, "watch": None}
    args = argparse.Namespace(**given, path=None, app=None, namespace=None)
    caplog.set_level("INFO", logger="gitmedic.bot.service.wiring")
    served = assemble(ServeSettings("s3cret", tmp_path / "state", repo), args, {})
    assert [loop.config.app for loop in served.loops] == ["shop"]
    (line,) = [r.getMessage() for r in caplog.records if "starting:" in r.getMessage()]
    assert "2 apps: broken (broken; not deployable: broken/web.yaml:" in line, line
    assert line.endswith(f"), shop ({NAMESPACE})"), line
    assert any(
        "broken: cannot deploy it: broken/web.yaml:" in r.getMessage() for r in caplog.records
    )
