"""The loop's transactions: plans from proposals, their ports, and the one runner that steps them.

Every transaction of the app (a fix, a retry, a requested revert, the watch of a
person's merge, a memory PR: the kinds of :mod:`gitmedic.bot.transactions`) gets
its ports here: a plan already in the journal is judged with the baselines its
checkpoint recorded, never with readings taken after its merge; a revert plan gets
:class:`~gitmedic.bot.transactions.revert.RevertPorts`, a watch
:class:`~gitmedic.bot.transactions.watch.WatchPorts`, a memory plan
:class:`~gitmedic.bot.transactions.memory.MemoryPorts`. The one runner of the
process is here, and it steps only while the app's writer lease is held
(``may_step``, the loop's lease check before each step). Announcing an outcome ends
with the dashboard issue updated (:class:`~gitmedic.bot.render.dashboard.DashboardKeeper`),
inside the runner's announcing step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from gitmedic.bot.controller.checks import Checks, runtime_checks
from gitmedic.bot.controller.config import LoopConfig
from gitmedic.bot.controller.wiring import Cluster, base_reader, build_ports, git, live_findings
from gitmedic.bot.memory.reflection import MemoryChange
from gitmedic.bot.render.dashboard import DashboardKeeper, DashboardView
from gitmedic.bot.render.pr_body import VerificationPlan
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.bot.transactions.fix import decision_for, plan_of, pr_body, preexisting
from gitmedic.bot.transactions.memory import decision_section, memory_decision, memory_plan
from gitmedic.bot.transactions.ports import ports_of
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import (
    Advanced,
    Journal,
    MachineConfig,
    Plan,
    Runner,
    TxnState,
)
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.signals import firing_key


class Transactions:
    def __init__(
        self,
        config: LoopConfig,
        cluster: Cluster,
        forge: Forge,
        journal: Journal,
        detectors: Sequence[Detector],
        *,
        on_record: Callable[[TxnState], None],
        may_step: Callable[[str], str] = lambda app: "",
    ) -> None:
        self.config, self.cluster, self.forge, self.journal = config, cluster, forge, journal
        self.detectors = list(detectors)
        machine = MachineConfig(
            sync_timeout_s=config.sync_timeout_s, poll_s=5.0, failure_limit=config.failure_limit
        )
        self.runner = Runner(
            journal, cluster.clock, machine, on_record=on_record, may_step=may_step
        )
        self.due: dict[str, float] = {}  # txn id -> when it may step again
        self.dashboard = DashboardKeeper(forge)
        self.dashboard.join(self.view)

    # -- ports -----------------------------------------------------------------------

    def checks(self, baselines: Mapping[str, Mapping[str, int] | None] | None = None) -> Checks:
        """The oracles of the verification window, with their baselines taken now (or given)."""
        cfg, cluster = self.config, self.cluster
        return runtime_checks(
            cluster.snapshot,
            cfg.namespace,
            cluster.alerts_oracle(),
            cfg.probes,
            self.detectors,
            window_s=cfg.window_s,
            interval_s=cfg.oracle_interval_s,
            failure_limit=cfg.failure_limit,
            baselines=baselines,
            probe_oracle=cluster.probe_oracle,
        )

    def ports(self, checks: Checks | None = None, *, plan: Plan | None = None) -> ForgePorts:
        """The ports of this app, verifying with ``checks`` (baselines taken now), or for a
        transaction already planned, with its plan's recorded baselines and its kind's ports."""
        if checks is None:
            checks = self.checks(plan.baselines if plan is not None and plan.baselines else None)
        cfg = self.config
        ports = build_ports(
            cfg.repo,
            cfg.path,
            cfg.namespace,
            self.forge,
            self.cluster,
            self.detectors,
            checks,
            announced=self.announced,
            deployer=cfg.deployer,
        )
        return ports if plan is None else ports_of(plan, ports, cfg.repo)

    def announced(self, state: TxnState) -> None:
        """The dashboard issue, after an outcome was told on its PR."""
        self.refresh_dashboard()

    def refresh_dashboard(self) -> None:
        """The dashboard issue as the journals are now (no forge call when unchanged)."""
        self.dashboard.refresh()

    def view(self) -> DashboardView:
        app = self.config.app
        return DashboardView(
            tuple(self.journal.transactions(app=app)),
            incidents=tuple(self.journal.incidents(app)),
            app=app,
        )

    # -- advancing ------------------------------------------------------------------

    def advance(self, txn_id: str) -> Advanced:
        """Step ``txn_id`` until settled or it must wait (a sync poll, the window's next
        measurement, a person's approval), with its plan's ports; never sleeps. The wait
        comes back in the answer, and its deadline is kept for :meth:`next_due`."""
        plan = self.journal.load(txn_id).plan
        advanced = self.runner.until_wait(txn_id, self.ports(plan=plan))
        if advanced.state.settled:
            self.due.pop(txn_id, None)
            return advanced
        self.due[txn_id] = self.cluster.clock.now() + advanced.wait_s
        if advanced.waiting_for_person:  # the dashboard offers hold and retry
            self.refresh_dashboard()
        return advanced

    def next_due(self) -> float | None:
        """The earliest deadline of a transaction of this process's that waits."""
        live = {t.plan.txn_id for t in self.unsettled()}
        dues = [at for txn_id, at in self.due.items() if txn_id in live]
        return min(dues) if dues else None

    def unsettled(self) -> list[TxnState]:
        return [t for t in self.journal.transactions(app=self.config.app) if not t.settled]

    def start(
        self,
        incident: Incident,
        proposal: Proposal,
        attempt: int,
        feedback: Sequence[str],
        follows: TxnState | None = None,
    ) -> Plan:
        """Plan attempt ``attempt`` at its checkpoint: base SHA, mu, baselines and what fires,
        all read now. What fires is read here, not taken from the monitor's last evaluation:
        a retry is planned right after its predecessor's revert, before the monitor looks
        again, and the undone candidate's damage (a crash-looping pod its ReplicaSet has not
        scaled down yet) may still be there. Taken from the stale reading, that damage was
        "absent at the checkpoint" and failed the retry fast as if the retry had caused it.

        The incident's own findings count as firing at the checkpoint even when absent at
        this instant: a fix cannot cause the fault it fixes. The revert's pods, started only
        once the candidate's are gone, had not pulled yet, so the image pull the incident
        was about fired again during the retry's sync and failed it fast. Whether the fix
        clears them is the window's question (its targets), not fail fast's."""
        cfg = self.config
        now = self.cluster.clock.now()
        live = live_findings(self.cluster, self.detectors)
        firing = frozenset(firing_key(f) for f in (*live, *incident.findings))
        decision = decision_for(proposal, incident, cfg.policy, now)
        checks = self.checks()
        vplan = VerificationPlan(
            self.cluster.engine_name,
            cfg.sync_timeout_s,
            checks.plan,
            cfg.window_s,
            attempt,
            cfg.attempts,
            revert_at_once=cfg.policy.reverts_at_once,
        )
        base = git(cfg.repo, "rev-parse", self.forge.default_branch())
        read = base_reader(cfg.repo, base)
        body = pr_body(proposal, incident, decision, vplan, read, follows)
        plan = plan_of(
            proposal,
            incident,
            attempt=attempt,
            base_sha=base,
            mu_pre=checks.mu_before,
            decision=decision,
            body=body,
            feedback=feedback,
            baselines=checks.baselines(),
            firing=firing,
            revert_auto_merge=cfg.policy.reverts_at_once,
            preexisting=preexisting(
                cfg.repo, cfg.path, cfg.namespace, self.detectors, proposal, cfg.deployer
            ),
        )
        self.journal.create(plan, now)
        return plan

    def start_memory(self, incident: str, change: MemoryChange) -> Plan:
        """The memory PR's transaction: the memory guard is its gate, the policy decides
        whether it merges itself (:mod:`gitmedic.bot.transactions.memory`), as for a fix."""
        base = git(self.config.repo, "rev-parse", self.forge.default_branch())
        mu = self.checks().mu_before
        now = self.cluster.clock.now()
        decision = memory_decision(change.files, self.config.policy, now)
        body = change.body.rstrip("\n") + "\n\n" + decision_section(decision)
        plan = memory_plan(
            self.config.app,
            incident,
            replace(change, body=body),
            base_sha=base,
            mu=mu,
            auto_merge=decision.auto_merge,
        )
        self.journal.create(plan, now)
        return plan


def share_dashboard(apps: Sequence[Transactions]) -> None:
    """The apps of one repository on one dashboard issue, a section each: every app's
    write renders all of them, so none hides another's transactions or boxes."""
    if not apps:
        return
    keeper = apps[0].dashboard
    for txns in apps[1:]:
        keeper.join(txns.view)
        txns.dashboard = keeper
