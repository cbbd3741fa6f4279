"""``gitmedic run`` and ``serve`` (subprocesses) with their journal in a real PostgreSQL
(``GITMEDIC_JOURNAL_URL``): a fault fixed end to end on the local forge and the sim, the
transaction and the lease in the database, nothing in the SQLite file, the password never
printed; a fix ``run`` left waiting is approved through ``serve``, which resumes it from
the shared database. Skipped, saying why, without a PostgreSQL server
(tests/support/postgres.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import Permission
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot.cli_world import (
    NEVER,
    configured_repo,
    gitmedic,
    prs,
    serve_process,
    serving,
    until,
)
from tests.bot.payloads import pr_comment
from tests.bot.run_world import REAL, app_repo, show, with_fault
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.integration  # the whole loop in a subprocess


def gitmedic_run(
    repo: Path, app: str, namespace: str, url: str
) -> subprocess.CompletedProcess[str]:
    argv = ["run", str(repo), "--path", app, "--namespace", namespace, "--once", "--json"]
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *argv, "--cluster", "sim", "--forge", "local"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "GITMEDIC_JOURNAL_URL": url},
        check=False,
    )


def test_run_fixes_a_fault_with_its_journal_and_lease_in_postgresql(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    manifest = f"{app}/{Path(REAL['online-boutique'][0]).name}"
    original = show(repo, "HEAD", manifest)
    with_fault(repo, app, namespace, "service-target-port", target=REAL["online-boutique"][2])

    result = gitmedic_run(repo, app, namespace, postgres_url)

    assert result.returncode == 0, result.stderr
    (incident,) = json.loads(result.stdout)["incidents"]
    (txn,) = incident["transactions"]
    assert txn["status"] == "committed" and txn["attempt"] == 1
    assert show(repo, "main", manifest) == original, "the fix restores the original bytes"
    assert LocalForge(repo).get_pr(txn["pr"]).state.value == "merged"
    journal = Journal(postgres_url)
    stored = {t.plan.txn_id: t for t in journal.transactions(incident=incident["id"])}
    assert set(stored) == {f"{incident['id']}/attempt-1", f"{incident['id']}/memory"}
    fix = stored[f"{incident['id']}/attempt-1"]
    assert fix.settled and fix.records[-1].phase.value == "committed" and fix.pr == txn["pr"]
    assert journal.incident(incident["id"]) is not None
    assert not (repo / ".git" / "gitmedic" / "journal.sqlite").exists(), "the journal is PG's"
    assert postgres_server.password not in result.stdout + result.stderr


def test_an_app_whose_lease_another_replica_holds_in_postgresql_is_left(
    tmp_path: Path, postgres_url: str
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    journal = Journal(postgres_url)
    far = 4_000_000_000.0  # a live replica on another node, its lease far from expiry
    assert journal.acquire("online-boutique", "node-b:7:cafebabe", now=far - 60, ttl_s=120).acquired

    result = gitmedic_run(repo, app, namespace, postgres_url)

    assert result.returncode == 1, result.stderr
    assert "node-b:7:cafebabe" in result.stderr
    assert journal.acquire("online-boutique", "node-b:7:cafebabe", now=far, ttl_s=120).acquired


def test_an_unreachable_journal_database_exits_2_without_its_password(tmp_path: Path) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    url = "postgresql://bot:Very-Secret-9931@127.0.0.1:1/gitmedic"

    result = gitmedic_run(repo, app, namespace, url)

    assert result.returncode == 2
    assert "GITMEDIC_JOURNAL_URL: cannot connect to the journal at " in result.stderr
    assert "postgresql://bot:****@127.0.0.1:1/gitmedic" in result.stderr
    assert "Very-Secret-9931" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_a_fix_run_left_waiting_is_approved_through_serve_on_the_same_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    with_fault(repo, app, namespace, "service-target-port", target=REAL["online-boutique"][2])
    journal_url = {"GITMEDIC_JOURNAL_URL": postgres_url}
    argv = ("run", repo, "--cluster", "sim", "--forge", "local", "--once")
    waiting = gitmedic(*argv, env=journal_url)
    assert waiting.rc == 1, waiting.err  # the fix waits for a person
    (fix,) = prs(repo)
    LocalForge(repo).set_permission("maria", Permission.MAINTAIN)
    journal = Journal(postgres_url)

    def committed() -> bool:
        found = [t for t in journal.transactions() if t.pr == fix["number"]]
        return bool(found) and found[0].phase is Phase.COMMITTED

    with serving(repo, env=journal_url) as served:
        assert served.comment(fix["number"], "maria", "/gitmedic approve", 4301).status_code == 202
        assert until(committed, 300), "serve did not carry the approved fix to committed"
    state = repo / ".git" / "gitmedic"
    assert not (state / "journal.sqlite").exists() and (state / "local.sqlite").is_file()
    assert LocalForge(repo).get_pr(fix["number"]).state.value == "merged"


def test_two_serve_replicas_on_one_postgresql_accept_a_delivery_once(
    tmp_path: Path, postgres_url: str
) -> None:
    """Behind one Service a delivery may reach either replica: GitHub's redelivery of it, or
    a captured body replayed under a new id. Whichever replica gets it second refuses it as
    a duplicate, as a single serve does, so a command is carried out once."""
    repo, _, _ = configured_repo(tmp_path, NEVER)
    journal_url = {"GITMEDIC_JOURNAL_URL": postgres_url}
    payload = pr_comment(1, "maria", "/gitmedic retry", 5501)

    def replica(name: str) -> list[str]:
        state = tmp_path / name
        return ["--forge", "local", "--repo", str(repo), "--state-dir", str(state)]

    with (
        serve_process(replica("a"), env=journal_url) as a,
        serve_process(replica("b"), env=journal_url) as b,
    ):
        first = a.post("issue_comment", payload, "delivery-5501")
        again = b.post("issue_comment", payload, "delivery-5501")  # GitHub's redelivery
        replayed = b.post("issue_comment", payload, "delivery-forged-1")  # another id
        other = pr_comment(1, "maria", "/gitmedic explain", 5502)
        fresh = b.post("issue_comment", other, "delivery-5502")
        scraped = httpx.get(f"{b.url}/metrics", timeout=10).text
    assert (first.status_code, first.json()["status"]) == (202, "queued")
    assert (again.status_code, again.json()["status"]) == (200, "duplicate delivery")
    assert (replayed.status_code, replayed.json()["status"]) == (200, "duplicate delivery")
    assert (fresh.status_code, fresh.json()["status"]) == (202, "queued"), "b accepts its own"
    duplicates = 'gitmedic_webhook_deliveries_total{event="issue_comment",result="duplicate"}'
    assert f"{duplicates} 2.0" in scraped
