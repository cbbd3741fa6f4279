"""``gitmedic sim status``: readable summary, the --json contract, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import main
from gitmedic.bot.controller.known_good import VerifiedRevisions
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.sim.helpers import app

BOUTIQUE = app("online-boutique")


def test_json_has_objects_entrypoints_alerts_and_application(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "sim",
            "status",
            str(BOUTIQUE.path),
            "--namespace",
            "boutique",
            "--json",
            "--seconds",
            "300",
        ]
    )

    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(doc) == {"objects", "entrypoints", "alerts", "application"}
    assert doc["entrypoints"]["boutique/frontend-external"] == {
        "success_rate": 1.0,
        "latency_ms": doc["entrypoints"]["boutique/frontend-external"]["latency_ms"],
    }
    assert doc["application"]["kind"] == "Application"
    assert doc["application"]["status"]["health"]["status"] == "Healthy"
    assert {o["kind"] for o in doc["objects"]} >= {
        "Pod",
        "Deployment",
        "ReplicaSet",
        "Endpoints",
        "Node",
    }


def test_text_summary_names_workloads_and_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["sim", "status", str(BOUTIQUE.path), "--namespace", "boutique", "--seconds", "120"]
    )

    out = capsys.readouterr().out
    assert code == 0
    assert "frontend-external" in out
    assert "alerts firing: 0" in out


@pytest.mark.parametrize("args", [["/no/such/path"], [str(BOUTIQUE.path), "--seconds", "-1"]])
def test_bad_input_is_a_clear_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sim", "status", *args])

    assert code == 2
    assert "gitmedic: error:" in capsys.readouterr().err


WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: web, image: "gcr.io/acme/web:{tag}"}}]}}
"""
CONFIG = "version: 1\napps:\n  - {name: web, path: app, namespace: shop}\n"


def released(tmp_path: Path) -> tuple[Path, str]:
    """An app whose newest commit is a release (v2) that ran: nothing before it named v2."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(CONFIG)
    (repo / "app" / "web.yaml").write_text(WEB.format(tag="v1"))
    init_repo(repo)
    (repo / "app" / "web.yaml").write_text(WEB.format(tag="v2"))
    return repo, commit_all(repo, "web: v2")


def status(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    code = main(["sim", "status", str(repo / "app"), "--namespace", "shop", "--seconds", "120"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out, captured.err


def test_sim_status_learns_from_the_revisions_the_loop_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, head = released(tmp_path)
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    VerifiedRevisions(journal).record("web", head, 1.0)

    out, err = status(repo, capsys)

    assert f"images learned from revision {head[:12]}, verified healthy" in err
    assert "for app web" in err
    assert "pods not ready" not in out


def test_without_a_journal_sim_status_says_it_learns_from_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = released(tmp_path)

    out, err = status(repo, capsys)

    assert "images learned from the history before HEAD, as for app web" in err
    assert "ImagePullBackOff" in out or "ErrImagePull" in out  # v2: the app's own change
    assert not (repo / ".git" / "gitmedic").exists(), "sim status never creates a journal"
