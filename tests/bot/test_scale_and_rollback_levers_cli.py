"""Scale-out and image-rollback levers end to end, through the real ``gitmedic`` command.

The sim of each process shows the runtime fault named in ``GITMEDIC_SIM_FAULTS``:
nothing in Git holds it. A saturated frontend (every replica at its CPU limit)
is scaled out, under a policy that allows levers, and ends healthy. A tag
pushed again with a broken build (Git unchanged) is rolled back to the build
the monitor saw run healthy in an *earlier* process (the record survives in the
state database), pinned by digest; a person approves it through ``serve``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import Permission
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot.cli_world import configured_repo, git, prs, run_once, serving, until
from tests.bot.test_runtime_levers_cli import LEVERS_ALLOWED, MANIFEST, lever_run

pytestmark = pytest.mark.integration


def test_a_saturated_workload_is_scaled_out_when_the_policy_allows_levers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, LEVERS_ALLOWED)
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "cpu-saturation:frontend")

    incident, txn = lever_run(repo, 0, "committed")

    assert {f["detector"] for f in incident["findings"]} == {"workload-saturated"}
    assert txn["mu_before"] > 0 and txn["mu_after"] == 0
    forge = LocalForge(repo)
    body = forge.get_pr(txn["pr"]).body
    assert "scale-out" in body and "spec.replicas of Deployment/boutique/frontend 1 -> 2" in body
    assert "within the configured ceiling of 10 replicas" in body
    assert _deployment(repo, "frontend")["spec"]["replicas"] == 2
    assert prs(repo)[0]["state"] == "merged"


def _deployment(repo: Path, name: str) -> dict[str, Any]:
    docs = yaml.safe_load_all(git(repo, "show", f"main:{MANIFEST}"))
    return next(
        d for d in docs if d and d["kind"] == "Deployment" and d["metadata"]["name"] == name
    )


def test_a_tag_pushed_again_is_rolled_back_to_the_build_an_earlier_process_saw_healthy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, "")
    assert run_once(repo).rc == 0, "a healthy first run notes what runs healthy"
    image = _deployment(repo, "frontend")["spec"]["template"]["spec"]["containers"][0]["image"]
    built = image.rsplit(":", 1)[0]  # the repository: its builds are named by digest
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "image-retag:frontend")

    incident, txn = lever_run(repo, 1, "held")

    assert len(incident["transactions"]) == 1
    forge = LocalForge(repo)
    body = forge.get_pr(txn["pr"]).body
    assert (
        "rollback-image" in body and f"the monitor last saw {image} (build {built}@sha256:" in body
    )
    pinned = body.split(f"-> {built}@sha256:", 1)[1].split(",", 1)[0]
    assert len(pinned) == 64, body

    forge.set_permission("maria", Permission.MAINTAIN)
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    with serving(repo) as served:
        assert served.comment(txn["pr"], "maria", "/gitmedic approve", 5201).status_code == 202
        assert until(lambda: journal.transactions()[-1].phase.terminal, 240), "never verified"
    state = journal.transactions()[-1]
    assert state.phase is Phase.COMMITTED, state.reason
    containers = _deployment(repo, "frontend")["spec"]["template"]["spec"]["containers"]
    assert containers[0]["image"] == f"{built}@sha256:{pinned}"


def test_saturation_at_the_configured_ceiling_escalates_naming_the_saturation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, _ = configured_repo(tmp_path, LEVERS_ALLOWED + "levers: {max_replicas: 1}\n")
    head = git(repo, "rev-parse", "main")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", "cpu-saturation:frontend")

    done = run_once(repo)

    assert done.rc == 1 and "Traceback" not in done.err, done.err
    (incident,) = done.json()["incidents"]
    assert incident["transactions"] == [] and prs(repo) == []
    assert git(repo, "rev-parse", "main") == head
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")
    row = journal.incident(incident["id"])
    assert row is not None and row.status == "escalated", row
    body = LocalForge(repo).get_issue(int(row.data["escalated"].removeprefix("issue #"))).body
    assert "all 1 Ready replica(s) busy, server at 100% of its CPU limit" in body, body
    assert "workload-saturated is runtime-only" in body, body
