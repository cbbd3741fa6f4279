"""``--format github``: workflow-command annotations, escaped per the runner's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.render.annotations import command, escape_data, escape_property
from tests.cli.conftest import Cli, faulty_boutique
from tests.conftest import APPS
from tests.manifests.helpers import commit_all, init_repo


def test_data_escapes_percent_and_line_breaks() -> None:
    assert escape_data("100% of\r\nit: a, b") == "100%25 of%0D%0Ait: a, b"


def test_properties_also_escape_colon_and_comma() -> None:
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_a_message_with_a_newline_stays_one_command() -> None:
    line = command("error", "first\nsecond", [("file", "a,b.yaml"), ("line", 3)])
    assert line == "::error file=a%2Cb.yaml,line=3::first%0Asecond"
    assert command("notice", "plain", []) == "::notice::plain"


def test_findings_are_annotations_at_their_files_and_lines(cli: Cli, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    faulty_boutique(repo / "deploy/app.yaml", "selector", "target-port")
    commit_all(repo)
    result = cli("detect", repo / "deploy", "--format", "github", "--namespace", "boutique")
    assert result.rc == 1
    lines = result.out.splitlines()
    # at the field each is about (the env entry, the selector, the targetPort), not at the
    # objects' first lines (21, 114, 204)
    assert [line.split("::")[1] for line in lines] == [
        "notice file=deploy/app.yaml,line=90,title=gitmedic env-service-address (service-missing)",
        "error file=deploy/app.yaml,line=122,title=gitmedic service-selector-unmatched",
        "error file=deploy/app.yaml,line=217,title=gitmedic service-target-port"
        " (target-port-undeclared)",
    ]
    assert lines[1].split("::", 2)[2].startswith("Service/boutique/frontend: ")
    assert all(len(line.split("::")) == 3 for line in lines)


def test_an_unreadable_manifest_is_an_error_annotation(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a tab used as indentation (teastore's trailing tabs, once used here, are valid YAML)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "tabbed.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n"
    )
    monkeypatch.chdir(tmp_path)
    result = cli("detect", "app", "--format", "github")
    assert result.rc == 2
    (error,) = result.out.splitlines()
    assert error.startswith("::error file=app/tabbed.yaml,line=4,title=gitmedic::")
    assert "tab character" in error


def test_a_clean_app_prints_nothing(cli: Cli) -> None:
    result = cli(
        "detect", APPS / "sock-shop/deploy/kubernetes/complete-demo.yaml", "--format", "github"
    )
    assert (result.rc, result.out) == (0, "")
