"""The sim's known-good is explicit: a configured revision, or the ones the bot verified healthy.

Learning from "the commits before HEAD" took a fault a few commits old for what
the images can run (so it vanished from the sim), and on a second ``run --once``
after a fix took the faulty commit's command for the expected one (so a phantom
fault appeared in the restored one).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitmedic.bot.controller.known_good import (
    KEPT,
    KnownGood,
    KnownGoodError,
    VerifiedRevisions,
    known_good,
    note_healthy,
)
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction import IncidentRow, Journal
from gitmedic.sim.faults import BENIGN
from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import configured_repo, git, gitmedic, prs, run_once
from tests.bot.run_world import app_repo, with_fault
from tests.support.stepping import WINDOW_PLAN

SERVICE = "productcatalogservice"


def _waiting(cluster: SimCluster, workload: str) -> set[str]:
    reasons = set()
    for pod in cluster.snapshot().of_kind("Pod"):
        if not pod.name.startswith(workload):
            continue
        for cs in pod.status.get("containerStatuses") or []:
            reasons.add(str(cs.get("state", {}).get("waiting", {}).get("reason", "running")))
    return reasons


def test_a_fault_a_few_commits_old_stays_visible_against_the_configured_known_good(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    good = git(repo, "rev-parse", "HEAD")
    with_fault(repo, app, namespace, "bad-image", target=SERVICE)
    from gitmedic.reconciler.manifests.load import load_desired

    BENIGN["comment"](repo, load_desired(repo / app, namespace=namespace).snapshot)
    commit_all(repo, "a harmless commit on top of the fault")

    from_history = SimCluster(repo, app, namespace)
    explicit = SimCluster(repo, app, namespace, known_good=(good,))

    # the history before HEAD holds the bad tag, so the sim took it for an image that exists
    assert _waiting(from_history, SERVICE) == {"running"}
    assert _waiting(explicit, SERVICE) & {"ErrImagePull", "ImagePullBackOff"}


def test_the_known_good_is_the_configured_revision_then_the_verified_ones(tmp_path: Path) -> None:
    repo, _, _ = app_repo(tmp_path, "online-boutique")
    head = git(repo, "rev-parse", "HEAD")
    journal = Journal(tmp_path / "journal.sqlite")

    assert known_good(repo, "", journal, "shop").revisions == ()  # a first run: history
    assert known_good(repo, "main", journal, "shop").revisions == (head,)
    deployed = SyncState(SyncPhase.DEPLOYED, "synced", head)
    assert note_healthy(journal, "shop", head, lambda sha: deployed, 100.0)
    assert known_good(repo, "", journal, "shop").revisions == (head,)
    assert known_good(repo, "", journal, "other").revisions == ()


def test_a_revision_that_is_not_deployed_is_not_recorded_as_healthy(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    syncing = SyncState(SyncPhase.PROGRESSING, "OutOfSync", "older")
    assert not note_healthy(journal, "shop", "abc", lambda sha: syncing, 1.0)
    assert VerifiedRevisions(journal).newest_first("shop") == ()


def test_verified_revisions_are_kept_newest_first_and_bounded(tmp_path: Path) -> None:
    verified = VerifiedRevisions(Journal(tmp_path / "journal.sqlite"))
    for n in range(KEPT + 5):
        verified.record("shop", f"rev{n}", float(n))
    verified.record("shop", "rev3", 1000.0)  # seen healthy again: newest now

    kept = verified.newest_first("shop")
    assert len(kept) == KEPT and kept[0] == "rev3" and kept[1] == f"rev{KEPT + 4}"


def test_a_known_good_that_names_no_commit_is_a_clear_error(tmp_path: Path) -> None:
    repo, _, _ = app_repo(tmp_path, "online-boutique")
    with pytest.raises(KnownGoodError, match=r"'v9\.9' is not a commit of"):
        known_good(repo, "v9.9", Journal(tmp_path / "journal.sqlite"), "shop")


@pytest.mark.integration
def test_run_refuses_a_configured_known_good_that_is_no_revision(tmp_path: Path) -> None:
    repo, _, _ = configured_repo(tmp_path, "", name="online-boutique")
    config = repo / ".gitmedic" / "config.yaml"
    config.write_text(config.read_text().replace("engine:", "sim: {known_good: v9.9}\n    engine:"))
    commit_all(repo, "a known-good that does not exist")

    done = run_once(repo)

    assert done.rc == 2, done.err
    assert "sim.known_good: 'v9.9' is not a commit of" in done.err
    assert prs(repo) == []


@pytest.mark.integration
def test_a_second_run_once_on_a_repo_the_bot_fixed_opens_nothing(tmp_path: Path) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    with_fault(repo, app, namespace, "wrong-command", target=SERVICE)

    argv: list[str | Path] = ["run", repo, "--path", app, "--namespace", namespace]
    first = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")
    assert first.rc == 0, first.err
    (incident,) = first.json()["incidents"]
    assert [t["status"] for t in incident["transactions"]] == ["committed"]
    fixed, opened = git(repo, "rev-parse", "main"), prs(repo)

    second = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")

    assert second.rc == 0, second.err
    assert second.json() == {"healthy": True, "incidents": []}
    assert git(repo, "rev-parse", "main") == fixed
    assert prs(repo) == opened


def _incident(journal: Journal, incident: str, base: str, status: str, opened: float) -> None:
    journal.save_incident(IncidentRow(incident, "shop", status, opened))
    txn = replace(WINDOW_PLAN, txn_id=f"{incident}/1", app="shop", incident=incident,
                  base_sha=base)  # fmt: skip
    journal.create(txn, opened)


def test_a_resolved_incident_keeps_the_history_before_it_until_a_revision_is_verified(
    tmp_path: Path,
) -> None:
    """A process killed after its incident resolved and before its run verified the
    revision healthy (the end of ``run --once``): the restarted sim must learn what the
    killed one learned, the history before the fault, not the history before HEAD, which
    holds the faulty commits and the bot's undone candidate (a phantom fault, and a new
    incident, in the restored app)."""
    repo, _, _ = app_repo(tmp_path, "online-boutique")
    journal = Journal(tmp_path / "journal.sqlite")
    _incident(journal, "shop-old", "a" * 40, "resolved", 1.0)
    _incident(journal, "shop-new", "b" * 40, "open", 2.0)
    assert known_good(repo, "", journal, "shop").history_rev == "b" * 40  # live: its base

    journal.save_incident(IncidentRow("shop-new", "shop", "resolved", 2.0))
    assert known_good(repo, "", journal, "shop").history_rev == "b" * 40  # the newest one's

    # created by a restarted process, whose sim clock began at the same epoch: listed first
    later = replace(WINDOW_PLAN, txn_id="shop-new/memory", app="shop", incident="shop-new",
                    attempt=0, strategy="memory", base_sha="c" * 40)  # fmt: skip
    journal.create(later, 0.5)
    journal.create(replace(later, txn_id="shop-new/2", attempt=2, strategy="playbook"), 0.5)
    assert known_good(repo, "", journal, "shop").history_rev == "b" * 40  # its first attempt's

    head = git(repo, "rev-parse", "HEAD")
    deployed = SyncState(SyncPhase.DEPLOYED, "synced", head)
    assert note_healthy(journal, "shop", head, lambda sha: deployed, 3.0)
    assert known_good(repo, "", journal, "shop") == KnownGood(
        (head,), source=f"revision {head[:12]}, verified healthy"
    )
