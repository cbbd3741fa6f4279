"""A queued ``/gitmedic retry`` applies to the fault it named, even after serve restarted.

Serve is wired with the sim over the shop with catalog's targetPort broken and a
policy that merges nothing by itself, so the first attempt waits for a person's
approval; the person asks for a retry instead, and serve restarts before the
monitor carried it out. The restarted loop reopens the fault under a new
incident id (ids carry the time they opened), and the queued retry must follow
the fault, not report the old id as gone.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.wiring import Served, wire
from gitmedic.reconciler.forge import BOT_LOGIN
from gitmedic.reconciler.transaction import Phase, TxnState
from tests.bot.service_kit import SECRET
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

pytestmark = pytest.mark.integration

NEVER_AUTO_MERGE = f"""version: 1
apps:
  - name: shop
    path: {APP}
    namespace: {NAMESPACE}
policy:
  auto_merge: never
  rules:
    - risk: high
"""


def held_repo(root: Path) -> Path:
    repo = make_repo(root)  # catalog's targetPort broken on main
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(NEVER_AUTO_MERGE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gitmedic: nothing merges without a person")
    return repo


def serve(root: Path, repo: Path) -> Served:
    """A serve process over the repo and the state directory (a restart: call again)."""
    args = argparse.Namespace(forge="local", cluster="sim", interval=10.0, path=APP,
                              namespace=NAMESPACE, watch=None)  # fmt: skip
    settings = ServeSettings(SECRET, root / "state", repo)
    return wire(settings, args, {}, LocalForge(repo), repo, lambda: None)


def steps_until(served: Served, done: Callable[[], bool], limit: int = 20) -> None:
    for _ in range(limit):
        if done():
            return
        served.monitor.step_once()
    raise AssertionError("not reached by monitor steps")


def first_attempt_retried(root: Path, repo: Path) -> tuple[TxnState, int]:
    """The first serve: an attempt waits for approval, and a person asks for a retry."""
    served = serve(root, repo)
    journal = served.actions.journal
    steps_until(served, lambda: bool(journal.transactions()))
    (state,) = journal.transactions()
    assert state.phase is Phase.AWAITING_APPROVAL and state.pr is not None
    assert "try incident" in served.actions.retry(state.pr)
    served.loop.lease.release()  # the process stops (a killed one's lease is taken over)
    return state, state.pr


def retry_reply(served: Served, pr: int) -> str:
    found = [c.body for c in served.actions.forge.list_comments(pr)
             if c.author == BOT_LOGIN and c.topic == "retry"]  # fmt: skip
    return found[-1] if found else ""


def test_a_retry_queued_before_a_restart_applies_to_the_reopened_fault(tmp_path: Path) -> None:
    repo = held_repo(tmp_path)
    first, pr = first_attempt_retried(tmp_path, repo)
    served = serve(tmp_path, repo)  # the restart
    served.loop.clock.sleep(60)  # serve was down a minute: the fault reopens later
    served.loop.act_on_intents()  # the intents' share of a tick before the loop looked
    assert served.actions.retries == [first.plan.incident], "kept until the loop has looked"
    served.monitor.step_once()  # the fault is seen once: not persisted, no incident yet
    assert served.loop.findings and not served.loop.incidents.open
    assert served.actions.retries == [first.plan.incident], "still firing: kept"
    journal = served.actions.journal
    steps_until(served, lambda: not served.actions.retries)
    # The reopened fault is the same incident: its id comes from what fires, not from when.
    again = journal.load(f"{first.plan.incident}/attempt-2")
    assert set(again.plan.targets) & set(first.plan.targets), "the same fault"
    assert again.phase is Phase.AWAITING_APPROVAL, "a new attempt, waiting for approval"
    reply = retry_reply(served, pr)
    assert f"Retry of incident {first.plan.incident}: attempt 2" in reply
    for _ in range(3):
        served.monitor.step_once()
    ids = [t.plan.txn_id for t in journal.transactions()]
    assert ids == [first.plan.txn_id, again.plan.txn_id], "one new attempt, not one more"


def test_a_retry_of_a_fault_gone_by_the_restart_says_so(tmp_path: Path) -> None:
    repo = held_repo(tmp_path)
    first, pr = first_attempt_retried(tmp_path, repo)
    catalog = repo / APP / "catalog.yaml"  # meanwhile a person fixes main by hand
    catalog.write_text(catalog.read_text().replace("targetPort: 3551", "targetPort: 3550", 1))
    git(repo, "commit", "-qam", "catalog: back to the port it serves")
    served = serve(tmp_path, repo)
    served.loop.act_on_intents()  # the intents' share of a tick before the loop looked
    assert served.actions.retries == [first.plan.incident] and not retry_reply(served, pr)
    served.monitor.step_once()
    assert served.actions.retries == []
    assert "its findings are no longer seen: the fault is gone" in retry_reply(served, pr)
    assert [t.plan.txn_id for t in served.actions.journal.transactions()] == [first.plan.txn_id]


def test_a_retry_without_a_restart_tries_the_open_incident_again(tmp_path: Path) -> None:
    repo = held_repo(tmp_path)
    served = serve(tmp_path, repo)
    journal = served.actions.journal
    steps_until(served, lambda: bool(journal.transactions()))
    (first,) = journal.transactions()
    assert first.pr is not None
    served.actions.retry(first.pr)
    served.monitor.step_once()
    second = journal.load(f"{first.plan.incident}/attempt-2")
    assert second.phase is Phase.AWAITING_APPROVAL and second.pr != first.pr
    assert "Retry of incident" in retry_reply(served, first.pr)
    assert "attempt 2: in-flight" in retry_reply(served, first.pr)
