"""A scripted world behind the transaction's ports, and a fake clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.transaction import (
    GateResult,
    MergeRefused,
    OpenedPR,
    Plan,
    PrState,
    SyncPhase,
    SyncState,
    TxnState,
    Verdict,
    VerdictPhase,
)
from gitmedic.reconciler.transaction.ports import WindowAnswer
from gitmedic.reconciler.transaction.window import Measurement, Signal, Stage


@dataclass
class World:
    """What the forge, GitOps engine and oracles will answer, and a log of calls."""

    clock: FakeClock
    gate_ok: bool = True
    mu_after_fix: float = 0.0
    fix_clears_targets: bool = True
    verdict_phase: VerdictPhase = VerdictPhase.SUCCESSFUL
    interfered: bool = False
    sync_delay_s: float = 30.0
    sync_never: bool = False
    sync_fails: bool = False
    revert_restores: bool = True
    # The fix is applied but the app never turns Healthy (another fault the fix leaves):
    # its own objects still rolling out are these ("Kind/namespace/name").
    fix_applied_unhealthy: bool = False
    fix_progressing: tuple[str, ...] = ()
    fix_clears_some: tuple[str, ...] = ()  # targets cleared, when not all (a partial fix)
    approved_after: float | None = None  # approval arrives at this time
    held_until: float | None = None  # a person's hold, lifted at this time
    merge_refusals: list[MergeRefused] = field(default_factory=list)
    closed_by_human: bool = False
    calls: list[str] = field(default_factory=list)
    window_count: int = 1  # measurements of a window
    window_interval_s: float = 10.0
    # What fires at a measurement of the fix's deployment (time -> signals): fail fast's input.
    signals: Callable[[float], Sequence[Signal]] = lambda now: ()
    # What fires that did not at the checkpoint (time -> findings as JSON): ports.caused.
    new_findings: Callable[[float], Sequence[Mapping[str, Any]]] = lambda now: ()
    prs: dict[int, dict[str, object]] = field(default_factory=dict)
    deployed: dict[str, float] = field(default_factory=dict)  # sha -> merge time

    def open_pr(self, plan: Plan) -> OpenedPR:
        self.calls.append("open_pr")
        for n, pr in self.prs.items():
            if pr["branch"] == plan.branch:
                return OpenedPR(n, str(pr["head"]))
        return self._new_pr(plan.branch, "head-1")

    def _new_pr(self, branch: str, head: str) -> OpenedPR:
        n = len(self.prs) + 1
        self.prs[n] = {"branch": branch, "head": head, "state": PrState.OPEN, "merge": ""}
        return OpenedPR(n, head)

    def pr_state(self, number: int) -> PrState:
        if self.closed_by_human and number == 1:
            return PrState.CLOSED
        state = self.prs[number]["state"]
        assert isinstance(state, PrState)
        return state

    def gate(self, plan: Plan, number: int) -> GateResult:
        self.calls.append("gate")
        head = str(self.prs[number]["head"])
        summary = "all green" if self.gate_ok else "new finding"
        result = GateResult(self.gate_ok, summary, head, self.main)
        if self.main_moves:  # someone merges to main right after the gate ran
            self.main, self.main_moves = f"{self.main}+1", False
        return result

    revert_unhealthy: bool = False
    main: str = "base"  # the default branch's head
    main_moves: bool = False

    def main_head(self) -> str:
        return self.main

    def approved(self, number: int) -> bool:
        return self.approved_after is not None and self.clock.now() >= self.approved_after

    def held(self, number: int) -> bool:
        return self.held_until is not None and self.clock.now() < self.held_until

    def merge(self, number: int, head_sha: str) -> str:
        pr = self.prs[number]
        if pr["state"] is PrState.MERGED:
            return str(pr["merge"])
        self.calls.append(f"merge:{number}")
        if self.merge_refusals:
            raise self.merge_refusals.pop(0)
        assert head_sha == pr["head"], "merged a head the gate did not see"
        pr["state"], pr["merge"] = PrState.MERGED, f"merge-{number}"
        self.deployed[f"merge-{number}"] = self.clock.now()
        return f"merge-{number}"

    def refresh_branch(self, plan: Plan, number: int) -> OpenedPR:
        self.calls.append("refresh")
        head = f"head-{int(str(self.prs[number]['head']).split('-')[1]) + 1}"
        self.prs[number]["head"] = head
        return OpenedPR(number, head)

    def sync_status(self, sha: str) -> SyncState:
        is_revert = sha != "merge-1"
        if self.sync_fails and not is_revert:
            return SyncState(SyncPhase.FAILED, "ComparisonError")
        if self.sync_never and not is_revert:
            return SyncState(SyncPhase.PROGRESSING, "waiting")
        ready = self.clock.now() - self.deployed[sha] >= self.sync_delay_s
        if ready and not is_revert and self.fix_applied_unhealthy:
            return SyncState(
                SyncPhase.PROGRESSING,
                "health is Progressing",
                applied=True,
                progressing=self.fix_progressing,
            )
        if ready and is_revert and self.revert_unhealthy:  # the incident is back, as before
            return SyncState(SyncPhase.PROGRESSING, "health is Degraded", applied=True)
        return SyncState(SyncPhase.DEPLOYED if ready else SyncPhase.PROGRESSING, "")

    def measure(self, plan: Plan, deployed_sha: str, stage: Stage) -> Measurement:
        self.calls.append(f"measure:{stage.value}:{deployed_sha}")
        signals = self.signals(self.clock.now()) if deployed_sha == "merge-1" else ()
        return Measurement(self.clock.now(), stage, deployed_sha, tuple(signals))

    def window(
        self, plan: Plan, deployed_sha: str, measurements: Sequence[Measurement]
    ) -> WindowAnswer:
        if len(measurements) < self.window_count:
            due = measurements[-1].at + self.window_interval_s if measurements else 0.0
            return WindowAnswer(None, due)
        self.calls.append(f"verify:{deployed_sha}")
        if deployed_sha != "merge-1":  # the revert
            mu = plan.mu_pre if self.revert_restores else plan.mu_pre + 5
            return WindowAnswer(Verdict(VerdictPhase.SUCCESSFUL, mu, False, "restored"))
        verdict = Verdict(
            self.verdict_phase,
            self.mu_after_fix,
            self.fix_clears_targets,
            "oracles ran 120s",
            findings=("KubePodCrashLooping checkout",) if self.mu_after_fix else (),
            interfered=self.interfered,
            cleared=self.fix_clears_some,
        )
        return WindowAnswer(verdict)

    def open_revert(self, state: TxnState) -> OpenedPR:
        self.calls.append("open_revert")
        number = state.pr
        for n, pr in self.prs.items():
            if pr["branch"] == f"revert-{number}":
                return OpenedPR(n, str(pr["head"]))
        return self._new_pr(f"revert-{number}", "revert-head")

    def caused(self, plan: Plan) -> tuple[Mapping[str, Any], ...]:
        self.calls.append("caused")
        return tuple(self.new_findings(self.clock.now()))

    def announce(self, state: TxnState, message: str) -> None:
        self.calls.append(f"announce:{message}")


CATALOG = {"kind": "Service", "namespace": "shop", "name": "catalog", "apiVersion": "v1"}


def plan(*, auto_merge: bool = True, mu_pre: float = 10.0, resource: bool = False) -> Plan:
    """The fix's plan; with ``resource`` its edit names the object it changes (the
    Service ``Service/shop/catalog``), as every responder's edit does."""
    edit: dict[str, Any] = {"file": "apps/shop/catalog.yaml", "op": "set", "value": 3550}
    if resource:
        edit["resource"] = CATALOG
    return Plan(
        txn_id="inc-1/1",
        app="shop",
        incident="inc-1",
        attempt=1,
        strategy="playbook",
        branch="gitmedic/inc-1/restore-catalog-target-port",
        title="Restore catalog targetPort",
        edits=(edit,),
        base_sha="base",
        mu_pre=mu_pre,
        targets=("abc123",),
        auto_merge=auto_merge,
    )
