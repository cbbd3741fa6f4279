"""Incidents: persistent findings of one application, grouped for one response.

The runner's :class:`~gitmedic.detectors.runner.Persistence` reports which
findings *activated* (seen often enough in a row) and which *cleared*. One fault
often trips several detectors a few evaluations apart (a bad selector: the
selector detector in desired state, then no endpoints live), so findings that
activate within ``debounce_s`` of an incident's first activation join it. After
that window the incident is sealed (the responder works on it) and later
activations wait in ``pending``; there is one open incident per application,
and the pending findings open the next one when it closes (every finding it
holds has cleared).

An incident holding a finding of a class the repo has learned (``known``: its
learned rules) is ready at once: what the debounce waits for, the other findings
of the same fault, is what the learned playbook restores anyway, and the rule
fired on the fault's own evidence (a learned rule refines a built-in finding).

An incident carries its findings, the live and desired snapshots of the last
evaluation that changed it, and the detectors' history: when each fingerprint
activated. Its id is derived from the application, the first activation time
and a digest of the first findings, never from a counter, so a restarted bot
computes the same id and the same branch name (``gitmedic/<id>/...``).

Everything is immutable: :meth:`Incidents.observe` returns the next state and
the incidents it opened, grew or closed. Time comes from an injected clock.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from gitmedic.detectors.finding import Finding, sort_findings
from gitmedic.detectors.runner import Transition
from gitmedic.detectors.snapshot import Snapshot

Clock = Callable[[], float]
# Names a new incident from its app and first findings (the loop's: stable ids from the journal).
Namer = Callable[[str, tuple[Finding, ...]], str]
DEFAULT_DEBOUNCE_S = 120.0


@dataclass(frozen=True)
class Incident:
    id: str
    app: str
    opened_at: float
    findings: tuple[Finding, ...]
    # The detectors' history: (fingerprint, when it activated), in activation order.
    activations: tuple[tuple[str, float], ...] = ()
    cleared: frozenset[str] = frozenset()
    live: Snapshot | None = field(default=None, compare=False, repr=False)
    desired: Snapshot | None = field(default=None, compare=False, repr=False)
    closed_at: float | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    @property
    def active(self) -> tuple[Finding, ...]:
        """Findings that have not cleared since they activated."""
        return tuple(f for f in self.findings if f.fingerprint not in self.cleared)

    def activated_at(self, finding: Finding) -> float | None:
        return next((t for fp, t in self.activations if fp == finding.fingerprint), None)

    def joined(self, found: Iterable[Finding], at: float) -> Incident:
        known = {f.fingerprint for f in self.findings}
        new = [f for f in found if f.fingerprint not in known]
        return replace(
            self,
            findings=tuple(sort_findings([*self.findings, *new])),
            activations=(*self.activations, *((f.fingerprint, at) for f in new)),
            cleared=self.cleared - {f.fingerprint for f in found},
        )

    def with_snapshots(self, live: Snapshot | None, desired: Snapshot | None) -> Incident:
        return replace(self, live=live or self.live, desired=desired or self.desired)


def incident_id(app: str, first_activation: float, findings: Iterable[Finding]) -> str:
    """``<app>-<UTC time>-<digest>``: safe in a branch name, the same after a restart."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(first_activation))
    prints = "\n".join(sorted(f.fingerprint for f in findings))
    digest = hashlib.sha256(f"{app}\n{prints}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9]+", "-", app.lower()).strip("-") or "app"
    return f"{slug}-{stamp}-{digest}"


def open_incident(
    app: str,
    found: Iterable[tuple[Finding, float]],
    live: Snapshot | None = None,
    desired: Snapshot | None = None,
    namer: Namer | None = None,
) -> Incident:
    pairs = sorted(found, key=lambda p: p[1])
    if not pairs:
        raise ValueError("an incident needs at least one finding")
    first = pairs[0][1]
    initial = [f for f, t in pairs if t == first]
    return Incident(
        id=namer(app, tuple(initial)) if namer else incident_id(app, first, initial),
        app=app,
        opened_at=first,
        findings=tuple(sort_findings([f for f, _ in pairs])),
        activations=tuple((f.fingerprint, t) for f, t in pairs),
        live=live,
        desired=desired,
    )


@dataclass(frozen=True)
class Incidents:
    """Open incidents by application, and activations waiting for the next incident."""

    debounce_s: float = DEFAULT_DEBOUNCE_S
    clock: Clock = field(default=time.time, compare=False, repr=False)
    namer: Namer | None = field(default=None, compare=False, repr=False)
    # Detectors of classes the repo has learned: an incident holding one is ready at once.
    known: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    open: Mapping[str, Incident] = field(default_factory=dict)
    pending: Mapping[str, tuple[tuple[Finding, float], ...]] = field(default_factory=dict)

    def observe(
        self,
        app: str,
        transition: Transition,
        *,
        live: Snapshot | None = None,
        desired: Snapshot | None = None,
    ) -> tuple[Incidents, tuple[Incident, ...]]:
        """Fold one evaluation's transition in; return the incidents it changed."""
        now = self.clock()
        state, changed = self._clear(app, transition.cleared, now)
        if not transition.activated:
            return state, changed
        current = state.open.get(app)
        if current is None:
            waiting = (*state.pending.get(app, ()), *((f, now) for f in transition.activated))
            opened = open_incident(app, waiting, live, desired, self.namer)
            return state._with(app, opened, ()), (*changed, opened)
        if now - current.opened_at <= self.debounce_s:
            grown = current.joined(transition.activated, now).with_snapshots(live, desired)
            return state._with(app, grown, state.pending.get(app, ())), (*changed, grown)
        waiting = (*state.pending.get(app, ()), *((f, now) for f in transition.activated))
        return state._with(app, current, waiting), changed

    def ready(self) -> list[Incident]:
        """Open incidents whose debounce window has passed, or that hold a finding of a
        class the repo has learned: the responder's work."""
        now = self.clock()
        return sorted(
            (
                i
                for i in self.open.values()
                if now - i.opened_at > self.debounce_s
                or any(f.detector in self.known for f in i.findings)
            ),
            key=lambda i: (i.opened_at, i.id),
        )

    def _clear(
        self, app: str, cleared: Iterable[Finding], now: float
    ) -> tuple[Incidents, tuple[Incident, ...]]:
        gone = {f.fingerprint for f in cleared}
        if not gone:
            return self, ()
        waiting = tuple(p for p in self.pending.get(app, ()) if p[0].fingerprint not in gone)
        current = self.open.get(app)
        if current is None or not gone & {f.fingerprint for f in current.findings}:
            return self._with(app, current, waiting), ()
        current = replace(current, cleared=current.cleared | gone)
        if current.active:
            return self._with(app, current, waiting), (current,)
        closed = replace(current, closed_at=now)
        if not waiting:
            return self._with(app, None, ()), (closed,)
        successor = open_incident(app, waiting, current.live, current.desired, self.namer)
        return self._with(app, successor, ()), (closed, successor)

    def _with(
        self, app: str, incident: Incident | None, waiting: tuple[tuple[Finding, float], ...]
    ) -> Incidents:
        opened = {a: i for a, i in self.open.items() if a != app}
        if incident is not None:
            opened[app] = incident
        pending = {a: p for a, p in self.pending.items() if a != app}
        if waiting:
            pending[app] = waiting
        return replace(self, open=opened, pending=pending)
