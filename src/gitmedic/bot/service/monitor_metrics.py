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
- ``gitmedic_llm_tokens_total``: tokens each proposal reports (0 in steady state);
- per app: ``gitmedic_app_last_evaluation_timestamp_seconds``,
  ``gitmedic_app_incidents_open`` and ``gitmedic_app_transactions{phase}`` (its
  unsettled transactions); ``gitmedic_incidents_open`` is their sum;
- per app, what the monitor could not judge: ``gitmedic_app_judged_partly`` (1 when
  a neighbour in its namespace does not render, so only its own objects are judged),
  ``gitmedic_app_findings_not_judged`` (findings set aside as maybe a neighbour's) and
  ``gitmedic_app_detectors_failing`` (detectors whose evaluation failed).

With a :class:`~gitmedic.bot.service.notify.Notifier` it also posts a message when the
app's incident is escalated to a person and when a transaction ends reverted.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from gitmedic.bot.controller.loop import Loop
from gitmedic.bot.controller.report import Event
from gitmedic.bot.service.notify import Notifier
from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.reconciler.transaction import Journal, Outcome, Phase, TxnState

COUNTED = (Outcome.COMMITTED, Outcome.REVERTED, Outcome.REJECTED, Outcome.FAILED)


class MonitorMetrics:
    def __init__(
        self,
        metrics: Metrics,
        journal: Journal,
        app: str = "",
        *,
        notifier: Notifier | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.metrics, self.journal, self.app = metrics, journal, app
        self.notifier, self.now = notifier, now
        # outcomes of earlier runs: not this process's
        finished = _finished(journal.transactions())
        self.counted = {txn_id: t.outcome for txn_id, t in finished.items()}

    def on_event(self, event: Event) -> None:
        tokens = event.data.get("tokens")
        if event.kind == "proposal" and isinstance(tokens, int) and tokens > 0:
            self.metrics.tokens.inc(tokens)
        if event.kind == "escalated" and self.notifier is not None:
            self.notifier.send(f"gitmedic escalated an incident of {self.app}: {event.text}")

    def after_step(self, loop: Loop) -> None:
        self.metrics.open_incidents(self.app, len(loop.incidents.open))
        self.metrics.app_evaluated.labels(app=self.app).set(self.now())
        self.metrics.detector_seconds.observe(loop.monitor.last_seconds)
        self.metrics.app_judged_partly.labels(app=self.app).set(int(bool(loop.config.undivided)))
        self.metrics.app_not_judged.labels(app=self.app).set(len(loop.monitor.unsure))
        self.metrics.app_detectors_failing.labels(app=self.app).set(len(loop.monitor.failing))
        txns = self.journal.transactions()  # read once: the phases and the outcomes
        self._phases(txns)
        for txn_id, state in _finished(txns).items():
            if txn_id not in self.counted:
                self.counted[txn_id] = state.outcome
                self.metrics.transactions.labels(outcome=state.outcome.value).inc()
                self._tell(state)

    def _phases(self, txns: list[TxnState]) -> None:
        unsettled = Counter(t.phase for t in txns if not t.phase.terminal)
        for phase in Phase:
            if not phase.terminal:  # every series set, so a drained phase reads 0
                count = unsettled[phase]
                self.metrics.app_transactions.labels(app=self.app, phase=phase.value).set(count)

    def _tell(self, state: TxnState) -> None:
        if self.notifier is None or state.outcome is not Outcome.REVERTED:
            return
        pr = f" (PR #{state.pr})" if state.pr else ""
        self.notifier.send(
            f"gitmedic reverted {state.plan.title}{pr} in {self.app}: the app was worse after it"
        )


def _finished(txns: list[TxnState]) -> dict[str, TxnState]:
    # Attempts at a fix: an incident's memory PR is a transaction, not an outcome of it.
    attempts = [t for t in txns if t.plan.strategy != "memory"]
    return {t.plan.txn_id: t for t in attempts if t.outcome in COUNTED}
