"""The memory PR: reflection's files on a branch, gated and merged by the same policy as fixes.

Memory changes the bot's own behaviour (a learned detector fires, a learned
playbook routes the next incident), so it is held to the law a fix is held to:

- **the gate**: the memory guard (``check_memory``, run on a throw-away worktree
  of the PR's head against main) is published as the ``gitmedic/gate`` status
  on the head, exactly as the transaction's gate is for a fix;
- **the policy**: the change is decided by :func:`gitmedic.bot.policy.decide` as
  strategy ``memory`` (the built-in rules make guard-checked memory low risk; a
  team's ``policy`` is taken as written, so ``auto_merge: never`` or a policy
  without a memory rule leaves it for a person);
- **waiting**: when the PR may not merge now, its body says why and what lets
  it proceed (``/gitmedic approve``); :func:`merge_approved_memory` (the serve
  monitor's share) merges an approved memory PR whose gate is green;
- **refusals**: a merge the forge refuses (a required check, branch protection)
  leaves the PR open with a comment saying why; it is never raised.

The PR's hidden state names the incident under ``memory`` (not ``incident``):
commands that act on an incident's attempts (``retry``) have nothing to do here.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.policy import ChangeSummary, Decision, decide
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.config import PolicyConfig
from gitmedic.reconciler.forge import Forge, ForgeError, PrState, StatusState
from gitmedic.reconciler.transaction.forge_ports import APPROVED_LABEL, GATE_CONTEXT, HOLD_LABEL

log = logging.getLogger(__name__)

MEMORY_LABEL = "gitmedic:memory"
MEMORY_LABELS = ("gitmedic", MEMORY_LABEL)
GUARD_PASSED = "memory guard passed: every file under .gitmedic/ validates"


@dataclass(frozen=True)
class MemoryFiles:
    """What reflection wrote, as the PR carries it."""

    incident: str
    branch: str
    title: str
    body: str
    files: Mapping[str, str]


@dataclass(frozen=True)
class MemoryPr:
    number: int
    merged: bool
    why: str  # why it merged, or why it waits (also on the PR)


def open_memory_pr(
    forge: Forge, repo: Path, memory: MemoryFiles, policy: PolicyConfig, now: float
) -> MemoryPr:
    """Commit, open, gate and (when the guard and the policy allow) merge the memory PR."""
    main = forge.default_branch()
    base = _git(repo, "rev-parse", main)
    head = forge.commit_files(memory.branch, base, dict(memory.files), memory.title)
    problems = guard_problems(repo, head, base)
    decision = decide(memory_summary(memory), policy, datetime.fromtimestamp(now, tz=UTC))
    body = memory.body.rstrip("\n") + "\n\n" + decision_section(decision, problems)
    state = {"memory": memory.incident, "risk": decision.risk, "auto_merge": decision.auto_merge}
    pr = forge.ensure_pr(memory.branch, main, memory.title, body, MEMORY_LABELS, state=state)
    gate = StatusState.FAILURE if problems else StatusState.SUCCESS
    forge.set_status(head, GATE_CONTEXT, gate, (problems[0] if problems else GUARD_PASSED)[:140])
    if problems:
        forge.add_labels(pr.number, [HOLD_LABEL])
        return MemoryPr(pr.number, False, f"the memory guard failed: {problems[0]}")
    if pr.state is PrState.MERGED:
        return MemoryPr(pr.number, True, "merged before")
    if not decision.auto_merge:
        return MemoryPr(pr.number, False, wait_reason(decision))
    return merge_memory(forge, pr.number, head)


def memory_summary(memory: MemoryFiles) -> ChangeSummary:
    """A memory change as the policy sees it: only files under ``.gitmedic/``, no objects."""
    lines = sum(text.count("\n") + 1 for text in memory.files.values())
    return ChangeSummary(strategy="memory", files=tuple(sorted(memory.files)), changed_lines=lines)


def decision_section(decision: Decision, problems: list[str]) -> str:
    """The body's risk section: the decision, and when it waits, why and what approves."""
    rule = f"`{decision.matched_rule}`" if decision.matched_rule else "none (default)"
    lines = [
        "## Risk",
        "",
        f"**Risk:** {decision.risk}  ",
        f"**Rule:** {rule}  ",
        f"**Why:** {decision.reason}  ",
        f"**Gate (`{GATE_CONTEXT}`):** "
        + (f"failed: {'; '.join(problems[:3])}" if problems else GUARD_PASSED),
        "",
    ]
    if problems:
        lines.append("This PR is held: memory that fails the guard is never merged by gitmedic.")
    elif decision.auto_merge:
        lines.append("gitmedic merges this PR itself: the policy allows it and the gate passed.")
    else:
        lines.append(f"**Waiting:** {wait_reason(decision)}")
    return "\n".join(lines) + "\n"


def wait_reason(decision: Decision) -> str:
    return (
        f"the policy does not let gitmedic merge this itself ({decision.reason}). "
        "Comment `/gitmedic approve` (or approve the PR) and gitmedic merges it; "
        "`/gitmedic merge` merges it at once."
    )


def merge_memory(forge: Forge, number: int, head: str) -> MemoryPr:
    """Merge the memory PR at ``head``; a refusal is told on the PR, never raised."""
    try:
        forge.merge(number, head)
    except ForgeError as exc:
        why = f"the forge refused the merge: {exc}"
        text = (
            f"**gitmedic** could not merge #{number}: {exc}.\n\nThe PR waits; clear what "
            "blocks it (a required check, branch protection), then `/gitmedic merge`."
        )
        forge.ensure_comment(number, "memory-merge", text)
        log.warning("memory PR #%s not merged: %s", number, exc)
        return MemoryPr(number, False, why)
    return MemoryPr(number, True, "the policy allows it and the gate passed")


def merge_approved_memory(forge: Forge) -> list[MemoryPr]:
    """Merge every open memory PR a person approved whose gate is green and is not held."""
    done = []
    for pr in forge.list_prs():
        labels = set(pr.labels)
        if MEMORY_LABEL not in labels or APPROVED_LABEL not in labels or HOLD_LABEL in labels:
            continue
        gate = {s.context: s.state for s in forge.get_statuses(pr.head_sha)}
        if gate.get(GATE_CONTEXT) is StatusState.SUCCESS:
            done.append(merge_memory(forge, pr.number, pr.head_sha))
    return done


def guard_problems(repo: Path, head: str, base: str) -> list[str]:
    """The memory guard on ``head`` (a detached worktree), against ``base``."""
    with tempfile.TemporaryDirectory(prefix="gitmedic-guard-") as tmp:
        tree = Path(tmp) / "tree"
        _git(repo, "worktree", "add", "-q", "--detach", str(tree), head)
        try:
            return [str(p) for p in check_memory(tree, base_rev=base)]
        finally:
            _git(repo, "worktree", "remove", "--force", str(tree))


def _git(repo: Path, *args: str) -> str:
    return gitcmd.output(repo, args[0], *args[1:])
