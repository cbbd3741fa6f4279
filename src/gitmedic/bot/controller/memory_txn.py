"""The memory PR as a transaction: the same machine and runner as a fix, other ports.

Reflection's files are recorded in the plan (``proposal.files``), so a resumed
transaction opens the very PR the killed process was opening (found again by
its branch, ``gitmedic/<incident>/memory``) and the outcome record lands once.
Three ports differ from :class:`ForgePorts`: the change is those files (whole,
rebased onto main by the gate as any change is), the gate is the memory guard
(``check_memory`` on that head, the same one a person's ``gitmedic memory check``
runs), and nothing is deployed to judge: ``.gitmedic/`` is not the app, so the
sync is the merge itself and the verdict keeps it at the checkpoint's mu.
Whether it merges on its own is the plan's ``auto_merge``, decided by the
caller's policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gitmedic.bot.controller.attempts import MEMORY
from gitmedic.bot.controller.remember import MEMORY_LABELS, guard_problems
from gitmedic.bot.memory.reflection import MemoryChange
from gitmedic.reconciler.forge import StatusState
from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction import GateResult, Plan, Verdict, VerdictPhase
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT, ForgePorts
from gitmedic.reconciler.transaction.ports import WindowAnswer
from gitmedic.reconciler.transaction.window import Measurement, Stage


def memory_txn_id(incident: str) -> str:
    return f"{incident}/memory"


def memory_plan(
    app: str,
    incident: str,
    change: MemoryChange,
    *,
    base_sha: str,
    mu: float,
    auto_merge: bool,
) -> Plan:
    return Plan(
        txn_id=memory_txn_id(incident),
        app=app,
        incident=incident,
        attempt=0,
        strategy=MEMORY,
        branch=change.branch,
        title=change.title,
        edits=(),
        base_sha=base_sha,
        mu_pre=mu,
        targets=(),
        auto_merge=auto_merge,
        body=change.body,
        proposal={"files": dict(change.files)},
    )


class MemoryPorts(ForgePorts):
    """ForgePorts for a memory plan (see the module docstring)."""

    def __init__(self, ports: ForgePorts, repo: Path) -> None:
        super().__init__(*ports.parts(), **ports.options(labels=MEMORY_LABELS))
        self.repo = repo  # the guard checks out the memory's head in a worktree of it

    def files(self, plan: Plan, at: str) -> dict[str, str | None]:
        files: Mapping[str, Any] = plan.proposal.get("files", {})
        return {str(k): None if v is None else str(v) for k, v in files.items()}

    def gate(self, plan: Plan, number: int) -> GateResult:
        base = self.main_head()
        head = self.forge.commit_files(plan.branch, base, self.files(plan, base), plan.title)
        problems = guard_problems(self.repo, head, base)
        summary = "; ".join(problems) or "the memory guard passes"
        state = StatusState.FAILURE if problems else StatusState.SUCCESS
        self.forge.set_status(head, GATE_CONTEXT, state, summary[:140])
        return GateResult(not problems, summary, head, base)

    def sync_status(self, sha: str) -> SyncState:
        return SyncState(SyncPhase.DEPLOYED, "memory is not deployed", revision=sha)

    def window(
        self, plan: Plan, deployed_sha: str, measurements: Sequence[Measurement]
    ) -> WindowAnswer:
        # Nothing to measure: the window closes at once.
        nothing = "memory only: nothing deployed"
        return WindowAnswer(Verdict(VerdictPhase.SUCCESSFUL, plan.mu_pre, True, nothing))

    def measure(self, plan: Plan, deployed_sha: str, stage: Stage) -> Measurement:
        return Measurement(self.verifier.clock.now(), stage, deployed_sha)

    def caused(self, plan: Plan) -> tuple[Mapping[str, Any], ...]:
        return ()
