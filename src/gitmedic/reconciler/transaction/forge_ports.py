"""The transaction's ports over a real forge, manifest repo, GitOps engine and oracles.

Every port is idempotent for its transaction, as the state machine requires:

- ``open_pr`` finds the PR again by the plan's deterministic branch, and
  ``commit_files`` returns the existing head when the branch already holds the
  change, so a crash between the push and the journal write costs nothing;
- ``merge`` of a PR already merged at the gated head returns its merge commit
  (the forge's contract), and ``open_revert`` finds the existing revert PR;
- the edits are applied by path onto the file as it is at the base being built
  on, so re-creating the branch on a newer main (``refresh_branch``) rebases the
  change rather than replaying stale bytes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gitmedic.detectors.finding import Severity
from gitmedic.reconciler.forge import (
    Conflict,
    Forge,
    ForgeError,
    HeadMoved,
    MergeNotAllowed,
    NotFound,
    NotMergeable,
    StatusState,
    Validation,
)
from gitmedic.reconciler.forge import PrState as ForgePrState
from gitmedic.reconciler.manifests.apply import apply_edit
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.sync.state import SyncState, SyncWatcher
from gitmedic.reconciler.transaction.gate import Gate
from gitmedic.reconciler.transaction.model import Plan, TxnState
from gitmedic.reconciler.transaction.ports import (
    GateResult,
    MergeRefused,
    OpenedPR,
    PrState,
    WindowAnswer,
)
from gitmedic.reconciler.transaction.signals import firing_key
from gitmedic.reconciler.transaction.verify import OracleVerifier
from gitmedic.reconciler.transaction.window import Measurement, Stage

GATE_CONTEXT = "gitmedic/gate"
LOCK_LABEL = "gitmedic:writer-lock"  # on the PR while its transaction holds the app's lock
APPROVED_LABEL = "gitmedic:approved"
HOLD_LABEL = "gitmedic:hold"
_PR_STATES = {
    ForgePrState.OPEN: PrState.OPEN,
    ForgePrState.CLOSED: PrState.CLOSED,
    ForgePrState.MERGED: PrState.MERGED,
}


class ForgePorts:
    def __init__(
        self,
        forge: Forge,
        read_file: Callable[[str, str], str],
        gate: Gate,
        watcher: SyncWatcher,
        verifier: OracleVerifier,
        *,
        main_head: Callable[[], str],  # the default branch's head, fetched
        labels: Iterable[str] = ("gitmedic",),
        changed_files: Callable[[str, str], Iterable[str]] | None = None,
        app_path: str = "",
        announced: Callable[[TxnState], None] = lambda state: None,
        describe_revert: Callable[[TxnState], str] | None = None,
    ) -> None:
        self.forge = forge
        self.read_file = read_file  # (repo-relative file, revision) -> text
        self.gate_check = gate
        self.watcher = watcher
        self.verifier = verifier
        self._main_head = main_head
        self.labels = tuple(labels)
        self.changed_files = changed_files  # (from sha, to sha) -> repo-relative paths
        self.app_path = app_path.strip("/")
        self.announced = announced  # after the comment: the dashboard, told too
        # The revert PR's body from the undoing state (what was measured); None keeps the
        # forge's own ("Reverts #N.").
        self.describe_revert = describe_revert

    def options(self, **changes: Any) -> dict[str, Any]:
        """The keyword settings, with ``changes``: what a port for another kind of
        transaction (a revert PR, a memory PR) keeps of this one."""
        kept: dict[str, Any] = {
            "main_head": self._main_head,
            "labels": self.labels,
            "changed_files": self.changed_files,
            "app_path": self.app_path,
            "announced": self.announced,
            "describe_revert": self.describe_revert,
        }
        return kept | changes

    def parts(self) -> tuple[Forge, Callable[[str, str], str], Gate, SyncWatcher, OracleVerifier]:
        """The positional settings (see :meth:`options`)."""
        return self.forge, self.read_file, self.gate_check, self.watcher, self.verifier

    # -- pull request ------------------------------------------------------------------

    def open_pr(self, plan: Plan) -> OpenedPR:
        existing = self.forge.find_pr(plan.branch)
        if existing is None:
            self.forge.commit_files(
                plan.branch, plan.base_sha, self.files(plan, plan.base_sha), plan.title
            )
            existing = self.forge.ensure_pr(
                plan.branch,
                self.forge.default_branch(),
                plan.title,
                plan.body,
                (*self.labels, LOCK_LABEL),
                state=pr_state(plan),
            )
        return OpenedPR(existing.number, existing.head_sha)

    def files(self, plan: Plan, at: str) -> dict[str, str | None]:
        """The plan's edited files as they are at ``at`` with the edits applied."""
        contents: dict[str, str] = {}
        for data in plan.edits:
            edit = Edit.from_json(data).with_base(None)
            current = contents.get(edit.file)
            if current is None:
                current = self.read_file(edit.file, at)
            contents[edit.file] = apply_edit(current, edit).content
        return dict(contents)

    def pr_state(self, number: int) -> PrState:
        try:
            return _PR_STATES[self.forge.get_pr(number).state]
        except NotFound:
            return PrState.MISSING

    def gate(self, plan: Plan, number: int) -> GateResult:
        base = self.main_head()
        try:
            # The branch must sit on the main it will merge into, so what is gated is
            # what lands; commit_files is a no-op when it already does.
            head = self.forge.commit_files(plan.branch, base, self.files(plan, base), plan.title)
        except Validation as exc:
            return GateResult(False, f"the change no longer applies to main: {exc}", "", base)
        report = self.gate_check.check(base, head, plan.targets)
        state = StatusState.SUCCESS if report.ok else StatusState.FAILURE
        self.forge.set_status(head, GATE_CONTEXT, state, report.summary[:140])
        return GateResult(report.ok, report.summary, head, base)

    def approved(self, number: int) -> bool:
        labels = self.forge.get_pr(number).labels
        return APPROVED_LABEL in labels and HOLD_LABEL not in labels

    def held(self, number: int) -> bool:
        return HOLD_LABEL in self.forge.get_pr(number).labels

    def merge(self, number: int, head_sha: str) -> str:
        try:
            return self.forge.merge(number, head_sha)
        except HeadMoved as exc:
            raise MergeRefused(f"the head moved: {exc}", retryable=True) from None
        except MergeNotAllowed as exc:  # the repository forbids the method: for good
            raise MergeRefused(f"not mergeable: {exc}", retryable=False) from None
        except NotMergeable as exc:
            closed = self.pr_state(number) is not PrState.OPEN
            raise MergeRefused(f"not mergeable: {exc}", retryable=not closed) from None
        except (Conflict, ForgeError) as exc:
            raise MergeRefused(str(exc), retryable=False) from None

    def main_head(self) -> str:
        return self._main_head()

    def refresh_branch(self, plan: Plan, number: int) -> OpenedPR:
        base = self.main_head()
        head = self.forge.commit_files(plan.branch, base, self.files(plan, base), plan.title)
        return OpenedPR(number, head)

    # -- deployment and verification ---------------------------------------------------

    def sync_status(self, sha: str) -> SyncState:
        return self.watcher.check(sha)

    def measure(self, plan: Plan, deployed_sha: str, stage: Stage) -> Measurement:
        restoring = self.restores_checkpoint(plan, deployed_sha)
        return self.verifier.measure(deployed_sha, stage, restoring=restoring)

    def window(
        self, plan: Plan, deployed_sha: str, measurements: Sequence[Measurement]
    ) -> WindowAnswer:
        restoring = self.restores_checkpoint(plan, deployed_sha)
        answer = self.verifier.window(plan, measurements, restoring=restoring)
        if answer.verdict is not None and self.someone_else_landed(deployed_sha):
            return WindowAnswer(replace(answer.verdict, interfered=True))
        return answer

    def restores_checkpoint(self, plan: Plan, deployed_sha: str) -> bool:
        """Is the app's deployed tree the checkpoint's, at another commit (a revert)?

        The checkpoint's own commit is not: a watch of a merge (its base the merge)
        judges exactly it."""
        if self.changed_files is None or deployed_sha == plan.base_sha:
            return False
        prefix = f"{self.app_path}/" if self.app_path else ""
        return not any(
            f.startswith(prefix) for f in self.changed_files(plan.base_sha, deployed_sha)
        )

    def someone_else_landed(self, deployed_sha: str) -> bool:
        """Did a change to the app's files reach main while the oracles watched ours?"""
        if self.changed_files is None:
            return False
        head = self.main_head()
        if head == deployed_sha:
            return False
        prefix = f"{self.app_path}/" if self.app_path else ""
        return any(f.startswith(prefix) for f in self.changed_files(deployed_sha, head))

    def caused(self, plan: Plan) -> tuple[Mapping[str, Any], ...]:
        """What fires now and did not at the checkpoint (not info): what the change caused.

        A detector already firing on the same object at the checkpoint is not new, even
        if its details moved on (a rollout now past its deadline): the change did not
        cause it, and a retry that sets out to fix it would chase the incident itself."""
        before = set(plan.firing)
        return tuple(
            f.to_json()
            for f in self.verifier.live_findings()
            if firing_key(f) not in before and f.severity is not Severity.INFO
        )

    def open_revert(self, state: TxnState) -> OpenedPR:
        assert state.pr is not None
        pr = self.forge.revert_pr(state.pr)
        if self.describe_revert is not None:
            # The forge's state marker ("reverts", "merge_sha") is kept: it finds the PR again.
            kept = dict(pr.bot_state or {"reverts": state.pr, "merge_sha": state.merge_sha})
            body = self.describe_revert(state)
            # The undo never waits on its description: refused, the forge's own body stays
            # ("Reverts #N."), and the outcome comment on the PR still says why.
            with contextlib.suppress(Validation):
                pr = self.forge.ensure_pr(pr.branch, pr.base, pr.title, body, state=kept)
        return OpenedPR(pr.number, pr.head_sha)

    def announce(self, state: TxnState, message: str) -> None:
        """The outcome on the PR (one comment, by key), the writer lock's label taken off it,
        then whatever else tells people (the dashboard)."""
        if state.pr is not None:
            self.forge.ensure_comment(state.pr, f"txn/{state.plan.txn_id}", message)
            if state.phase.terminal:
                self.forge.remove_labels(state.pr, [LOCK_LABEL])
        self.announced(state)


def pr_state(plan: Plan) -> dict[str, Any]:
    """The hidden state marker of a transaction's PR: enough to find it again."""
    return {
        "txn": plan.txn_id,
        "app": plan.app,
        "incident": plan.incident,
        "attempt": plan.attempt,
        "strategy": plan.strategy,
    }
