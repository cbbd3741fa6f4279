"""The config file: validated against the shipped schema, defaults applied, errors located."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gitmedic.bot.cli.main import main
from gitmedic.reconciler.config import ConfigError, parse_config, schema
from gitmedic.reconciler.manifests.apps import load_apps_desired
from gitmedic.reconciler.manifests.config_file import load_config

MINIMAL = {"version": 1, "apps": [{"name": "shop", "path": "apps/shop"}]}


def test_defaults_fill_what_the_file_leaves_out() -> None:
    config = parse_config(MINIMAL)
    app = config.app("shop")
    assert (app.namespace, app.engine.kind, app.oracles.window_s) == ("default", "sim", 120.0)
    assert config.policy.auto_merge == "low" and config.attempts == 3


def test_every_violation_is_reported_with_its_location() -> None:
    bad = {
        "version": 1,
        "apps": [{"name": "Shop!", "path": "x", "engine": {"kind": "argo"}}],
        "policy": {"auto_merge": "always"},
        "surprise": True,
    }
    with pytest.raises(ConfigError) as err:
        parse_config(bad, "cfg.yaml")
    text = str(err.value)
    assert text.startswith("cfg.yaml is invalid:")
    assert "apps[0].engine.kind: 'argo' is not one of" in text
    assert "apps[0].name: 'Shop!' does not match" in text
    assert "policy.auto_merge: 'always' is not one of" in text
    assert "(top level): Additional properties are not allowed ('surprise' was unexpected)" in text


def test_duplicate_app_names_are_refused() -> None:
    data = {"version": 1, "apps": [{"name": "a", "path": "x"}, {"name": "a", "path": "y"}]}
    with pytest.raises(ConfigError, match=r"apps\[1\]\.name: duplicate app name 'a'"):
        parse_config(data)


def test_yaml_problems_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("version: 1\nversion: 2\napps: []\n")
    with pytest.raises(ConfigError, match=r"config.yaml:2: invalid YAML: duplicate key 'version'"):
        load_config(path)


def test_the_init_template_is_valid_against_the_schema(tmp_path: Path) -> None:
    (tmp_path / "apps/shop").mkdir(parents=True)
    assert main(["init", str(tmp_path), "--name", "shop", "--path", "apps/shop"]) == 0
    config = load_config(tmp_path / ".gitmedic" / "config.yaml")
    assert config.app("shop").engine.kind == "argocd"
    assert (tmp_path / ".github/workflows/gitmedic-detect.yml").is_file()
    assert (tmp_path / ".gitmedic/outcomes.jsonl").read_text() == ""


def test_init_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".gitmedic").mkdir()
    mine = "version: 1\napps:\n  - {name: mine, path: ., namespace: mine}\n"
    (tmp_path / ".gitmedic/config.yaml").write_text(mine)
    main(["init", str(tmp_path)])
    assert (tmp_path / ".gitmedic/config.yaml").read_text() == mine
    assert (
        "kept     .gitmedic/config.yaml (exists; --force overwrites it)" in capsys.readouterr().out
    )


def test_the_schema_is_a_valid_json_schema() -> None:
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema())


def _repo(tmp_path: Path) -> Path:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}  # fmt: skip
    for app in ("shop", "blog"):
        (tmp_path / "apps" / app).mkdir(parents=True)
        (tmp_path / "apps" / app / "svc.yaml").write_text(yaml.safe_dump(svc))
    (tmp_path / ".gitmedic").mkdir()
    config = {"version": 1, "apps": [
        {"name": "shop", "path": "apps/shop", "namespace": "shop"},
        {"name": "blog", "path": "apps/blog/", "namespace": "blog"},
    ]}  # fmt: skip
    (tmp_path / ".gitmedic/config.yaml").write_text(yaml.safe_dump(config))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_apps_take_their_namespace_from_the_config(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    whole = load_apps_desired(repo)
    assert sorted(o.namespace for o in whole.snapshot) == ["blog", "shop"]
    inner = load_apps_desired(repo / "apps" / "shop" / "svc.yaml")
    assert [o.namespace for o in inner.snapshot] == ["shop"]
    forced = load_apps_desired(repo / "apps", namespace="other")
    assert {o.namespace for o in forced.snapshot} == {"other"}


def test_detect_reads_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    assert main(["detect", str(repo), "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert sorted(f["resource"]["namespace"] for f in findings) == ["blog", "shop"]


def test_detect_refuses_an_invalid_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    (repo / ".gitmedic/config.yaml").write_text("version: 2\napps: []\n")
    assert main(["detect", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "config.yaml is invalid" in err and "version: 1 was expected" in err


@pytest.mark.integration
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "apps[0].oracles.failure_limit: -1 is less than the minimum of 0"),
        ("two", "apps[0].oracles.failure_limit: 'two' is not of type 'integer'"),
        (1.5, "apps[0].oracles.failure_limit: 1.5 is not of type 'integer'"),
    ],
)
def test_run_refuses_a_bad_failure_limit_and_changes_nothing(
    tmp_path: Path, value: object, message: str
) -> None:
    repo = _repo(tmp_path)
    config = repo / ".gitmedic/config.yaml"
    data = yaml.safe_load(config.read_text())
    data["apps"][0]["oracles"] = {"failure_limit": value}
    config.write_text(yaml.safe_dump(data))
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qm", "config"], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", "run", str(repo), "--cluster", "sim", "--once"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "--all", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log.split() == ["config"] and not (repo / ".git" / "gitmedic").exists()


def test_two_probes_of_one_url_in_an_app_are_refused() -> None:
    # a probe's oracle is named after its URL: a second one would be confused with the first
    probes = [{"url": "http://web/healthz"}, {"url": "http://web/healthz", "timeout_s": 2}]
    data = {"version": 1, "apps": [{"name": "a", "path": "x", "oracles": {"probes": probes}}]}
    with pytest.raises(ConfigError, match=r"apps\[0\]\.oracles\.probes\[1\]\.url: duplicate probe"):
        parse_config(data)
    other = {"name": "b", "path": "y", "oracles": {"probes": probes[:1]}}
    data["apps"] = [{"name": "a", "path": "x", "oracles": {"probes": probes[:1]}}, other]
    parse_config(data)  # one URL in two apps: two apps, two oracles
