"""A fix's targets: what its incident found, less what the app had before the fault."""

from __future__ import annotations

from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.transactions.fix import fix_targets
from gitmedic.detectors.finding import Finding, Resource, Severity

WEB = Resource("Deployment", "shop", "web", "apps/v1")


def finding(rule: str, severity: Severity = Severity.CRITICAL) -> Finding:
    return Finding("d", rule, severity, WEB, rule)


MEMORY, STRATEGY, NOTE = (
    finding("memory"),
    finding("strategy", Severity.WARNING),
    finding("note", Severity.INFO),
)
INCIDENT = Incident("i", "shop", 0.0, (MEMORY, STRATEGY, NOTE))


def test_a_finding_from_before_the_fault_is_no_target() -> None:
    assert fix_targets(INCIDENT, frozenset({STRATEGY.fingerprint})) == (MEMORY.fingerprint,)


def test_without_history_every_finding_above_info_is_a_target() -> None:
    assert fix_targets(INCIDENT, frozenset()) == (MEMORY.fingerprint, STRATEGY.fingerprint)


def test_targets_are_never_dropped_to_none() -> None:
    everything = frozenset({MEMORY.fingerprint, STRATEGY.fingerprint})
    assert fix_targets(INCIDENT, everything) == (MEMORY.fingerprint, STRATEGY.fingerprint)
