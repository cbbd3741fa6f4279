"""What the monitor records into serve's ``/metrics``: incidents, outcomes, detector time, tokens.

The webhook side records deliveries, jobs and queue depth itself; this is the
monitor's side, fed after each monitor step (:meth:`MonitorMetrics.after_step`)
and by the loop's timeline (:meth:`MonitorMetrics.on_event`):

- ``gitmedic_incidents_open``: the loop's open incidents, after the step;
- ``gitmedic_detector_evaluation_seconds``: the monitor's last evaluation;
- ``gitmedic_transactions_total{outcome}``: transactions that reached a final
  outcome while this process ran, read from the journal, so those driven by
  comment commands (an approval, a ``/gitmedic revert``) count as well as the
  loop's; outcomes already in the journal at start are not counted again;
- ``gitmedic_llm_tokens_total``: tokens each proposal reports (0 in steady state).
"""

from __future__ import annotations

from gitmedic.bot.loop.loop import Loop
from gitmedic.bot.loop.report import Event
from gitmedic.bot.server.metrics import Metrics
from gitmedic.reconciler.transaction import Journal, Outcome

COUNTED = (Outcome.COMMITTED, Outcome.REVERTED, Outcome.REJECTED, Outcome.FAILED)


class MonitorMetrics:
    def __init__(self, metrics: Metrics, journal: Journal) -> None:
        self.metrics = metrics
        self.journal = journal
        self.counted = self._finished()  # outcomes of earlier runs: not this process's

    def on_event(self, event: Event) -> None:
        tokens = event.data.get("tokens")
        if event.kind == "proposal" and isinstance(tokens, int) and tokens > 0:
            self.metrics.tokens.inc(tokens)

    def after_step(self, loop: Loop) -> None:
        self.metrics.incidents.set(len(loop.incidents.open))
        self.metrics.detector_seconds.observe(loop.monitor.last_seconds)
        for txn_id, outcome in self._finished().items():
            if txn_id not in self.counted:
                self.counted[txn_id] = outcome
                self.metrics.transactions.labels(outcome=outcome.value).inc()

    def _finished(self) -> dict[str, Outcome]:
        # Attempts at a fix: an incident's memory PR is a transaction, not an outcome of it.
        attempts = [t for t in self.journal.transactions() if t.plan.strategy != "memory"]
        return {t.plan.txn_id: t.outcome for t in attempts if t.outcome in COUNTED}
