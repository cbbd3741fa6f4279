"""``gitmedic prs``: the local forge's pull requests, as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import main
from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import StatusState
from tests.forge.backends import BRANCH, FIX, STATE, commit_files, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repo with one merged PR and one open PR carrying a gate status and labels."""
    repo = make_repo(tmp_path / "repo")
    forge = LocalForge(repo)
    first = commit_files(repo, "gitmedic/inc-0/replicas", {"README.md": "x\n"}, "main")
    merged = forge.ensure_pr("gitmedic/inc-0/replicas", "main", "Scale web", "b").number
    forge.merge(merged, first)
    head = commit_files(repo, BRANCH, FIX, "main")
    forge.ensure_pr(BRANCH, "main", "Fix targetPort", "b", ["gitmedic", "risk:low"], STATE)
    forge.set_status(head, "gitmedic/gate", StatusState.SUCCESS, "gate passed")
    return repo


def test_prs_prints_a_table(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prs", str(repo / "apps")]) == 0
    assert capsys.readouterr().out == (
        "#  STATE   BRANCH                              TITLE           STATUSES"
        "               LABELS\n"
        "1  merged  gitmedic/inc-0/replicas             Scale web       -"
        "                      -\n"
        "2  open    gitmedic/inc-1/service-target-port  Fix targetPort  gitmedic/gate:success"
        "  gitmedic, risk:low\n"
    )


def test_prs_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prs", str(repo), "--json"]) == 0
    prs = json.loads(capsys.readouterr().out)["prs"]
    assert [(p["number"], p["state"], p["branch"]) for p in prs] == [
        (1, "merged", "gitmedic/inc-0/replicas"),
        (2, "open", BRANCH),
    ]
    assert prs[0]["merge_sha"] is not None and prs[1]["merge_sha"] is None
    assert prs[1]["labels"] == ["gitmedic", "risk:low"]
    assert prs[1]["bot_state"] == STATE
    assert prs[1]["statuses"] == [
        {
            "context": "gitmedic/gate",
            "state": "success",
            "description": "gate passed",
            "target_url": None,
        }
    ]


def test_prs_of_a_repo_without_a_forge_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    assert main(["prs", str(repo)]) == 0
    assert capsys.readouterr().out == "no pull requests\n"
    assert main(["prs", str(repo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"prs": []}
    assert not (repo / ".git" / "gitmedic").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [("plain", "is not inside a git repository"), ("missing", "does not exist")],
)
def test_prs_outside_a_repo_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    (tmp_path / "plain").mkdir()
    assert main(["prs", str(tmp_path / name)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("gitmedic: error: ")
    assert message in captured.err
