"""``gitmedic sim status``: readable summary, the --json contract, bad input."""

from __future__ import annotations

import json

import pytest

from gitmedic.bot.cli import main
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
