"""``ForgeIntents``: the BotActions of ``gitmedic serve`` on its own, over the forge alone.

What a person asks is done on the forge where the forge can do it, and
recorded where the monitor must act:

- ``approve`` / ``hold`` / ``unhold`` set the labels ``gitmedic:approved`` and
  ``gitmedic:hold`` that the transaction's ``approved()`` port and the merge step
  read (a label is visible to people and survives restarts, Renovate-style);
- ``merge`` merges a gitmedic PR whose gate status passed (the transaction then
  sees a human merge, its strongest approval, and carries on);
- ``revert`` opens the revert PR of any merged PR (``forge.revert_pr``) and
  records an intent so the monitor runs it as a transaction;
- ``retry`` closes the attempt's PR and records an intent for a new attempt;
- ``watch_merge``, ``main_moved`` and ``detector_run`` are recorded as intents.

Intents live in ``intents.sqlite`` in the state directory: append-only rows
that the monitor (``gitmedic run`` in the same process) consumes and marks done.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path

from gitmedic.bot.actions import ActionRefused, DetectorRun, bot_pr, open_bot_pr
from gitmedic.reconciler.forge import Forge, PrState, StatusState

APPROVED, HOLD = "gitmedic:approved", "gitmedic:hold"
GATE_CONTEXT = "gitmedic/gate"


class IntentLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS intents (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
                " data TEXT NOT NULL, at REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0,"
                " UNIQUE (kind, data))"
            )

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def record(self, kind: str, **data: object) -> None:
        """Record an intent once: the same intent twice is one row (idempotent)."""
        db = self._db()
        try:
            db.execute(
                "INSERT OR IGNORE INTO intents (kind, data, at) VALUES (?, ?, ?)",
                (kind, json.dumps(data, sort_keys=True), time.time()),
            )
        finally:
            db.close()

    def pending(self) -> list[tuple[int, str, dict[str, object]]]:
        db = self._db()
        try:
            rows = db.execute("SELECT id, kind, data FROM intents WHERE done = 0 ORDER BY id")
            return [(int(i), str(k), json.loads(d)) for i, k, d in rows.fetchall()]
        finally:
            db.close()

    def mark_done(self, intent_id: int) -> None:
        db = self._db()
        try:
            db.execute("UPDATE intents SET done = 1 WHERE id = ?", (intent_id,))
        finally:
            db.close()


class ForgeIntents:
    def __init__(self, forge: Forge, log: IntentLog) -> None:
        self.forge, self.log = forge, log

    def approve(self, pr: int) -> str:
        open_bot_pr(self.forge, pr, "approve")
        self.forge.add_labels(pr, [APPROVED])
        return f"Approved: gitmedic merges #{pr} once its gate passes."

    def merge(self, pr: int) -> str:
        found = open_bot_pr(self.forge, pr, "merge")
        gate = {s.context: s.state for s in self.forge.get_statuses(found.head_sha)}
        if gate.get(GATE_CONTEXT) is not StatusState.SUCCESS:
            raise ActionRefused(f"#{pr} cannot merge yet: its {GATE_CONTEXT} check has not passed.")
        sha = self.forge.merge(pr, found.head_sha)
        return f"Merged #{pr} as `{sha[:12]}`; gitmedic now waits for the sync and verifies it."

    def revert(self, pr: int) -> str:
        found = self.forge.get_pr(pr)
        if found.state is not PrState.MERGED:
            raise ActionRefused(f"#{pr} is {found.state.value}, not merged: nothing to revert.")
        revert = self.forge.revert_pr(pr)
        self.log.record("revert", pr=pr, revert_pr=revert.number, merge_sha=found.merge_sha)
        return (
            f"Opened #{revert.number} to revert #{pr}. gitmedic carries it like any change: "
            "gate, merge, wait for the sync, verify."
        )

    def retry(self, pr: int) -> str:
        found = bot_pr(self.forge, pr, "retry")
        if found.state is PrState.MERGED:
            raise ActionRefused(f"#{pr} is merged; to undo it use `/gitmedic revert`.")
        self.forge.close_pr(pr)
        self.log.record("retry", pr=pr, incident=(found.bot_state or {}).get("incident"))
        return f"Closed #{pr}; gitmedic will try again with a new attempt."

    def hold(self, pr: int) -> str:
        bot_pr(self.forge, pr, "hold")
        self.forge.add_labels(pr, [HOLD])
        return f"Holding #{pr}: it will not be merged automatically (`/gitmedic unhold` undoes)."

    def unhold(self, pr: int) -> str:
        bot_pr(self.forge, pr, "unhold")
        self.forge.remove_labels(pr, [HOLD])
        return f"#{pr} is no longer held."

    def explain(self, pr: int) -> str:
        found = self.forge.get_pr(pr)
        state = found.bot_state
        if state is None:
            return f"#{pr} was not opened by gitmedic, so there is nothing of mine to explain."
        facts = ", ".join(f"{k}: {json.dumps(state[k])}" for k in sorted(state))
        labels = ", ".join(found.labels) or "none"
        return f"#{pr} is {found.state.value}. Its state: {facts}. Labels: {labels}."

    def watch_merge(self, pr: int, merge_sha: str) -> None:
        self.log.record("watch", pr=pr, merge_sha=merge_sha)

    def main_moved(self, sha: str) -> None:
        self.log.record("main-moved", sha=sha)

    def detector_run(self, run: DetectorRun) -> None:
        self.log.record("detector-run", **asdict(run))
