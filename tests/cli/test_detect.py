"""``gitmedic detect``: exit codes, --fail-on, --detector, --list, formats, --rev."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.variants import SPEC as VARIANTS
from tests.cli.conftest import BOUTIQUE_RELEASE, Cli, faulty_boutique
from tests.conftest import APPS, App
from tests.manifests.helpers import commit_all, init_repo

OTEL = APPS / "astronomy-shop-otel-demo/kubernetes/opentelemetry-demo.yaml"


def test_a_clean_app_exits_0(cli: Cli) -> None:
    result = cli("detect", BOUTIQUE_RELEASE, "--namespace", "boutique")
    assert result.rc == 0
    # Its only finding is advice: the optional shopping assistant it addresses is not deployed.
    assert result.out.rstrip().endswith("1 finding (1 info) in 35 objects from 1 file")
    assert "info     env-service-address" in result.out


def test_every_real_app_exits_0_or_1_never_2(cli: Cli, real_app: App) -> None:
    result = cli("detect", real_app.path, "--namespace", real_app.namespace, "--format", "json")
    assert result.rc in (0, 1), result.err
    report = result.json()
    assert report["errors"] == []
    worst = {f["severity"] for f in report["findings"]}
    assert result.rc == (1 if worst & {"warning", "critical"} else 0)


def test_findings_exit_1_and_the_text_report_names_file_and_line(cli: Cli, tmp_path: Path) -> None:
    path = faulty_boutique(tmp_path / "k.yaml", "selector")
    result = cli("detect", path, "--namespace", "boutique")
    assert result.rc == 1
    assert "Service/boutique/frontend  (k.yaml:114)" in result.out
    assert "CRITICAL service-selector-unmatched" in result.out
    assert result.out.rstrip().endswith("2 findings (1 critical, 1 info) in 35 objects from 1 file")
    assert result.err == ""


def test_fail_on_sets_the_lowest_failing_severity(cli: Cli, tmp_path: Path) -> None:
    warning_only = faulty_boutique(tmp_path / "k.yaml", "env-duplicate")
    assert cli("detect", warning_only).rc == 1
    assert cli("detect", warning_only, "--fail-on", "critical").rc == 0
    # info findings are advice: they fail a build only when asked to.
    info_only = cli("detect", BOUTIQUE_RELEASE, "--format", "json").json()["findings"]
    assert {f["severity"] for f in info_only} == {"info"}
    assert cli("detect", BOUTIQUE_RELEASE).rc == 0
    assert cli("detect", BOUTIQUE_RELEASE, "--fail-on", "info").rc == 1


def test_detector_selects_which_detectors_run(cli: Cli, tmp_path: Path) -> None:
    path = faulty_boutique(tmp_path / "k.yaml", "selector", "env-duplicate")
    every = {f["detector"] for f in cli("detect", path, "--format", "json").json()["findings"]}
    assert every == {"service-selector-unmatched", "env-duplicate", "env-service-address"}
    one = cli("detect", path, "--format", "json", "--detector", "env-duplicate")
    assert {f["detector"] for f in one.json()["findings"]} == {"env-duplicate"}
    other = cli("detect", path, "--detector", "service-target-port")
    assert other.rc == 0


def test_an_unknown_detector_is_a_usage_error_listing_the_known_ones(
    cli: Cli, tmp_path: Path
) -> None:
    result = cli("detect", BOUTIQUE_RELEASE, "--format", "json", "--detector", "nope")
    assert result.rc == 2
    assert result.out == ""
    assert "unknown detector 'nope'" in result.err
    for det in builtin_registry():
        assert det.id in result.err


def test_list_prints_every_detector_once(cli: Cli) -> None:
    result = cli("detect", "--list")
    assert result.rc == 0
    ids = [line.split()[0] for line in result.out.splitlines()]
    # the detectors and the check made while reading (object-variants)
    assert ids == sorted([*(d.id for d in builtin_registry()), VARIANTS.id])


def test_detect_without_a_path_is_a_usage_error(cli: Cli) -> None:
    result = cli("detect")
    assert (result.rc, result.out) == (2, "")
    assert "detect needs a PATH" in result.err


def test_rev_and_working_tree_are_read_separately(cli: Cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", "selector")
    commit_all(repo, "fault")
    faulty_boutique(repo / "deploy/app.yaml")  # fixed in the working tree, not committed
    assert cli("detect", repo / "deploy", "--rev", "HEAD").rc == 1
    assert cli("detect", repo / "deploy").rc == 0


@pytest.mark.integration
def test_kustomize_findings_point_at_the_resource_file_and_line(cli: Cli, tmp_path: Path) -> None:
    src = APPS / "online-boutique/kubernetes-manifests"
    dest = tmp_path / "kustomize"
    dest.mkdir()
    for f in src.iterdir():
        text = f.read_text()
        if f.name == "cartservice.yaml":  # the cartservice Service (line 69) selects nothing
            text = text.replace(
                "  selector:\n    app: cartservice\n", "  selector:\n    app: cart\n"
            )
        (dest / f.name).write_text(text)
    result = cli("detect", dest, "--namespace", "boutique", "--format", "json")
    assert result.rc == 1
    (finding,) = [
        f for f in result.json()["findings"] if f["detector"] == "service-selector-unmatched"
    ]
    assert finding["resource"]["name"] == "cartservice"
    text = cli("detect", dest, "--namespace", "boutique").out
    assert "Service/boutique/cartservice  (cartservice.yaml:69)" in text
