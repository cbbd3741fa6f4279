"""A comment command reaching a replica that does not hold the app is carried out by the
replica that does: intents are rows of the shared PostgreSQL journal.

The world is the shard tests' (:mod:`tests.realkube.shard_replicas`: real Leases on a
bare API server, the chart's RBAC, two ``gitmedic serve --shard-leases`` replicas on
one repository of the local forge and the sim) with Debian's PostgreSQL as the one
journal, and a policy that merges nothing without a person. A fault is committed into
one app; its holder opens the fix's PR, which waits for approval. A person comments
``/gitmedic retry`` on it, and the webhook reaches the *other* replica (a Service
balances deliveries over the pods). That replica answers at once (closes the PR,
records the retry) and never steps the app; the holder's next tick finds the intent
in the journal, starts attempt 2 and says so on the person's PR. Then ``/gitmedic
merge`` on attempt 2's PR, again to the other replica: the holder merges it and says
so on the PR. When intents lived in each replica's own SQLite file beside the journal,
the retry was never run (and the merge, made by the approval label, never told).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.webhook.signature import sign
from gitmedic.reconciler.forge import BOT_LOGIN, Permission, PrState
from gitmedic.reconciler.transaction import Journal, Phase, TxnState
from gitmedic.sim.faults.git import commit_all
from tests.bot.payloads import pr_comment
from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import ControlPlane
from tests.realkube.processes import stop_recorded
from tests.realkube.shard_replicas import SECRET, Replicas, shares, until

pytestmark = REALKUBE

APPS = ["shop", "blog", "wiki"]
LEASE_S = 6

HELD = """version: 1
apps:
{apps}policy:
  auto_merge: never
  rules:
    - risk: high
"""


def waiting_fix(journal: Journal, app: str) -> TxnState | None:
    found = [t for t in journal.transactions(app=app) if t.phase is Phase.AWAITING_APPROVAL]
    return found[0] if found else None


def deliver_comment(port: int, pr: int, user: str, body: str, comment_id: int) -> int:
    raw = json.dumps(pr_comment(pr, user, body, comment_id)).encode()
    headers = {
        "X-GitHub-Event": "issue_comment",
        "X-GitHub-Delivery": f"shard-intents-{comment_id}",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(SECRET, raw),
    }
    url = f"http://127.0.0.1:{port}/webhooks/github"
    return httpx.post(url, content=raw, headers=headers, timeout=30).status_code


def last_step(mark: Path) -> float:
    """When a replica last stepped an app (tests/support/step_marks), 0 for never."""
    return float(mark.read_text()) if mark.exists() else 0.0


def intents(url: str) -> list[tuple[str, str, str, int, str]]:
    """The journal's intents rows: (app, kind, key, done, result)."""
    import psycopg  # the [postgres] extra, as the shard tests' other reads of the journal

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT app, kind, key, done, result FROM intents ORDER BY id")
        return [(r[0], r[1], r[2], int(r[3]), r[4]) for r in rows]


def test_a_retry_asked_on_a_replica_not_holding_the_app_is_run_by_its_holder(
    lease_plane: ControlPlane, tmp_path: Path, postgres_url: str
) -> None:
    namespace = f"t-pg-intents-{os.getpid()}"
    lease_plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    shared = {"GITMEDIC_JOURNAL_URL": postgres_url}
    replicas = Replicas(lease_plane, namespace, tmp_path, APPS, lease_s=LEASE_S, env=shared)
    repo = replicas.repo
    listed = "".join(f"  - {{name: {n}, path: apps/{n}, namespace: {n}}}\n" for n in APPS)
    (repo / ".gitmedic" / "config.yaml").write_text(HELD.format(apps=listed))
    commit_all(repo, "gitmedic: nothing merges without a person")
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.WRITE)
    journal = Journal(postgres_url)
    try:
        replicas.start("a")
        replicas.start("b")
        until(replicas.alive(lambda: set(shares(replicas.holders())) == {"a", "b"}), 180)
        holders = replicas.holders()
        app = APPS[0]
        holder = holders[app]
        other = "b" if holder == "a" else "a"

        web = repo / "apps" / app / "web.yaml"
        web.write_text(web.read_text().replace("targetPort: 8080", "targetPort: 9090"))
        commit_all(repo, f"{app}: the service's port")
        until(replicas.alive(lambda: waiting_fix(journal, app) is not None), 150)
        first = waiting_fix(journal, app)
        assert first is not None and first.pr is not None and first.plan.attempt == 1
        pr = first.pr

        # the comment reaches the replica that does not hold the app
        asked_at = time.time()
        assert deliver_comment(replicas.ports[other], pr, "maria", "/gitmedic retry", 7101) == 202
        incident = first.plan.incident

        def closed_and_recorded() -> bool:
            return forge.get_pr(pr).state is PrState.CLOSED and any(
                row[:3] == (app, "retry", incident) for row in intents(postgres_url)
            )

        until(replicas.alive(closed_and_recorded), 60)
        asked = [c for c in forge.list_comments(pr) if c.author == BOT_LOGIN]
        assert any("try incident" in c.body for c in asked), [c.body for c in asked]

        second = f"{incident}/attempt-2"

        def retried() -> bool:
            told = [c for c in forge.list_comments(pr) if c.topic == "retry"]
            return bool(told) and any(t.plan.txn_id == second for t in journal.transactions())

        took = until(replicas.alive(retried), 120)
        print(f"shards on PostgreSQL: a retry asked of {other} run by {holder} in {took:.1f} s")
        (told,) = [c.body for c in forge.list_comments(pr) if c.topic == "retry"]
        assert f"Retry of incident {incident}: attempt 2" in told, told
        ((*row, result),) = [row for row in intents(postgres_url) if row[1] == "retry"]
        assert row == [app, "retry", incident, 1] and result in told, "recorded once, done once"
        assert f"retry of {incident}" in replicas.log(holder), "the holder carried it out"
        assert f"retry of {incident}" not in replicas.log(other)
        assert replicas.holders()[app] == holder, "the app never changed hands"
        assert last_step(replicas.marks(other) / app) < asked_at, f"{other} did not step it"
        again = journal.load(second)
        assert again.phase is not Phase.PLANNED and again.pr not in (None, pr), "a new PR"
        assert [t.plan.txn_id for t in journal.transactions(app=app)] == [
            first.plan.txn_id,
            second,
        ], "one new attempt"

        # attempt 2 waits for approval too: a merge asked of the other replica is merged
        # by the holder's tick, which says so on the PR (told by whoever recorded it before)
        until(replicas.alive(lambda: journal.load(second).phase is Phase.AWAITING_APPROVAL), 120)
        pr2 = journal.load(second).pr
        assert pr2 is not None
        assert deliver_comment(replicas.ports[other], pr2, "maria", "/gitmedic merge", 7102) == 202

        def merge_told() -> bool:
            return any(c.topic == "merge" for c in forge.list_comments(pr2))

        until(replicas.alive(merge_told), 120)
        merged = journal.load(second)
        (said,) = [c.body for c in forge.list_comments(pr2) if c.topic == "merge"]
        assert merged.merge_sha and f"Merged #{pr2} as `{merged.merge_sha[:12]}`" in said, said
        assert forge.get_pr(pr2).state is PrState.MERGED
        assert [r[:4] for r in intents(postgres_url) if r[1] == "merge"] == [
            (app, "merge", str(pr2), 1)
        ], "recorded by the other, done by the holder"
        assert f"merge of #{pr2}" in replicas.log(holder)
        assert f"merge of #{pr2}" not in replicas.log(other)
        assert last_step(replicas.marks(other) / app) < asked_at, f"{other} did not step it"
        for name in APPS[1:]:
            assert journal.transactions(app=name) == [], f"{name} untouched"
    finally:
        stop_recorded(replicas.procs.folder)
        lease_plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
