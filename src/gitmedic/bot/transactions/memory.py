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
policy as strategy ``memory`` (:func:`memory_decision`).

Memory changes the bot's own behaviour (a learned rule fires, a learned
playbook routes the next incident), so it is held to the law a fix is held to:
:func:`gitmedic.bot.policy.decide.decide` (the built-in rules make guard-checked memory
low risk; a team's ``policy`` is taken as written, so ``auto_merge: never`` or a
policy without a memory rule leaves it for a person, who approves it with
``/gitmedic approve`` as any fix), told in the PR's body (:func:`decision_section`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.memory.reflection import MemoryChange
from gitmedic.bot.policy.decide import ChangeSummary, Decision, decide
from gitmedic.bot.transactions.kinds import MEMORY
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.config import PolicyConfig
from gitmedic.reconciler.forge import StatusState
from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction import GateResult, Plan, Verdict, VerdictPhase
from gitmedic.reconciler.transaction.forge_ports import GATE_CONTEXT, ForgePorts
from gitmedic.reconciler.transaction.ports import WindowAnswer
from gitmedic.reconciler.transaction.window import Measurement, Stage

MEMORY_LABELS = ("gitmedic", "gitmedic:memory")
GUARD_GATE = "the memory guard (every file under .gitmedic/ validates)"


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


def guard_problems(repo: Path, head: str, base: str) -> list[str]:
    """The memory guard's problems with the memory at ``head`` (none: it may merge)."""
    with tempfile.TemporaryDirectory(prefix="gitmedic-guard-") as tmp:
        tree = Path(tmp) / "tree"
        gitcmd.output(repo, "worktree", "add", "-q", "--detach", str(tree), head)
        try:
            return [str(p) for p in check_memory(tree, base_rev=base)]
        finally:
            gitcmd.output(repo, "worktree", "remove", "--force", str(tree))


def memory_decision(files: Mapping[str, str | None], policy: PolicyConfig, now: float) -> Decision:
    """The policy's decision on a memory change: only files under ``.gitmedic/``, no objects."""
    lines = sum((text or "").count("\n") + 1 for text in files.values())
    change = ChangeSummary(strategy="memory", files=tuple(sorted(files)), changed_lines=lines)
    return decide(change, policy, datetime.fromtimestamp(now, tz=UTC))


def decision_section(decision: Decision) -> str:
    """The body's risk section: the decision, and when it waits, why and what approves."""
    rule = f"`{decision.matched_rule}`" if decision.matched_rule else "none (default)"
    lines = [
        "## Risk",
        "",
        f"**Risk:** {decision.risk}  ",
        f"**Rule:** {rule}  ",
        f"**Why:** {decision.reason}  ",
        f"**Gate (`{GATE_CONTEXT}`):** {GUARD_GATE}",
        "",
    ]
    if decision.auto_merge:
        lines.append("gitmedic merges this PR itself once the gate passes: the policy allows it.")
    else:
        lines.append(f"**Waiting:** {wait_reason(decision)}")
    return "\n".join(lines) + "\n"


def wait_reason(decision: Decision) -> str:
    return (
        f"the policy does not let gitmedic merge this itself ({decision.reason}). "
        "Comment `/gitmedic approve` (or approve the PR) and gitmedic merges it; "
        "`/gitmedic merge` merges it at once."
    )
