"""The "gitmedic dashboard" issue, Renovate-style: the bot's state at a glance, from the journal.

Sections: what a person can do (:mod:`~gitmedic.bot.render.dashboard_controls`:
``hold``, ``retry`` and ``revert`` boxes beside each transaction in flight or
recently finished, acted on by :mod:`gitmedic.bot.service.dashboard_desk`), incidents
(from the journal: every incident of the app with its status and attempts;
without them, an incident is open until one of its transactions commits),
transactions in flight, PRs waiting for approval, recent outcomes (the last
:data:`RECENT` finished transactions with time to resolution and tokens) and
memory health (the memory guard's review flags, given as input).

A repository of several apps gets one issue with a section per app
(:func:`render_board`, capped by :mod:`~gitmedic.bot.render.dashboard_apps`), as
Renovate keeps one Dependency Dashboard per repository: the apps' loops share one
keeper (:func:`DashboardKeeper.join`), which renders every app's view on each
write, so no app's write hides another's transactions or boxes.

The body holds only absolute times, never "3 minutes ago", so the same journal
renders the same body; :class:`DashboardKeeper` then skips the forge call when
the body is unchanged, and ``ensure_issue`` itself does not rewrite an issue
whose body hash matches (a restarted keeper costs one call, not an edit).
That same hash check would leave a box a person ticked ticked, since unticking
it gives the body gitmedic rendered: an answered tick therefore records which
edit it answered in the issue's state (``answered``), and a changed state makes
the forge write the body again, every box unticked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from gitmedic.bot.render.dashboard_apps import NAMED, AppSection, fit_sections
from gitmedic.bot.render.dashboard_controls import render_actions
from gitmedic.bot.render.templates import cell, fill
from gitmedic.bot.render.untrusted import untrusted
from gitmedic.reconciler.forge import Forge, Issue
from gitmedic.reconciler.transaction import IncidentRow, Outcome, Phase, TxnState

TITLE = "gitmedic dashboard"
LABELS = ("gitmedic",)
RECENT = 10
KIND = "dashboard"  # the issue's state marker names it the dashboard


@dataclass(frozen=True)
class DashboardView:
    transactions: tuple[TxnState, ...]
    memory_flags: tuple[str, ...] = ()
    incidents: tuple[IncidentRow, ...] = ()  # the journal's, when the caller keeps them
    app: str = ""  # its section's name when the issue holds several apps


def render_dashboard(view: DashboardView) -> str:
    """One app's dashboard: the whole issue of a repository of one app."""
    return fill("dashboard.md", **_fields(view))


def render_board(views: Sequence[DashboardView]) -> str:
    """The issue of every app: one app's dashboard as it is, several apps in sections."""
    if len(views) == 1:
        return render_dashboard(views[0])
    each = [_fields(v) for v in views]
    sections = [_section(v, f) for v, f in zip(views, each, strict=True)]
    counts = [_counts(v) for v in views]
    head = fill(
        "dashboard_apps.md",
        summary=f"**{len(views)}** apps: "
        + _summary(*(sum(c[i] for c in counts) for i in range(3))),
        apps=", ".join(f"`{untrusted(v.app)}`" for v in views[:NAMED])
        + (f" and {len(views) - NAMED} more" if len(views) > NAMED else ""),
    )
    return fit_sections(head, sections)


def _section(view: DashboardView, fields: dict[str, str]) -> AppSection:
    app = untrusted(view.app)
    short = fill(
        "dashboard_app_short.md", app=app, summary=fields["summary"], actions=fields["actions"]
    )
    return AppSection(view.app, fill("dashboard_app.md", app=app, **fields), short)


def _counts(view: DashboardView) -> tuple[int, int, int]:
    """Open incidents, transactions in flight and PRs waiting for approval."""
    txns = view.transactions
    incidents = _incident_rows(view) if view.incidents else _open_incidents(txns)
    in_flight = [t for t in txns if not t.phase.terminal]
    return (
        len(incidents),
        len(in_flight),
        sum(t.phase is Phase.AWAITING_APPROVAL for t in in_flight),
    )


def _summary(incidents: int, in_flight: int, waiting: int) -> str:
    return (
        f"**{incidents}** open incident(s) · **{in_flight}** transaction(s) "
        f"in flight · **{waiting}** PR(s) waiting for approval"
    )


def _fields(view: DashboardView) -> dict[str, str]:
    txns = view.transactions
    open_incidents = _incident_rows(view) if view.incidents else _open_incidents(txns)
    in_flight = [t for t in txns if not t.phase.terminal]
    waiting = [t for t in in_flight if t.phase is Phase.AWAITING_APPROVAL]
    finished = sorted((t for t in txns if t.phase.terminal), key=_ended, reverse=True)
    recent = finished[:RECENT]
    return dict(
        summary=_summary(len(open_incidents), len(in_flight), len(waiting)),
        actions=render_actions([*in_flight, *recent]),
        incidents=_incidents_table(open_incidents),
        in_flight=_table(
            ("Transaction", "App", "Phase", "PR", "Attempt", "Since"),
            [_in_flight_row(t) for t in in_flight],
        ),
        waiting=_table(
            ("PR", "Incident", "App", "Waiting since"),
            [(_pr(t.pr), t.plan.incident, t.plan.app, _time(_ended(t))) for t in waiting],
        ),
        outcomes=_table(
            ("Transaction", "Outcome", "PR", "Strategy", "Time to resolution", "Tokens"),
            [_outcome_row(t) for t in recent],
        ),
        memory="\n".join(f"- :warning: {cell(f)}" for f in view.memory_flags)
        or "All memory checks pass.",
    )


class DashboardKeeper:
    """Keeps the dashboard issue current; one forge call per change, none otherwise."""

    def __init__(self, forge: Forge) -> None:
        self.forge = forge
        self._last_digest: str | None = None
        self.issue: Issue | None = None
        self.views: list[Callable[[], DashboardView]] = []  # the apps it shows, in order

    def join(self, view: Callable[[], DashboardView]) -> None:
        """One more app on this dashboard: :meth:`refresh` renders its view too."""
        self.views.append(view)

    def refresh(self, answered: str = "") -> bool:
        """Every joined app's view as its journal is now, published (see :meth:`update`)."""
        return self.update_all([view() for view in self.views], answered)

    def update(self, view: DashboardView, answered: str = "") -> bool:
        """Render and publish; False (and no forge call) when nothing changed.

        ``answered``: the edit whose ticks were just acted on; the body is then
        written again even when unchanged, so the ticked boxes are cleared."""
        return self.update_all([view], answered)

    def update_all(self, views: Sequence[DashboardView], answered: str = "") -> bool:
        """:meth:`update` of the issue of several apps, a section each."""
        body = render_board(views)
        digest = hashlib.sha256(body.encode()).hexdigest()
        if digest == self._last_digest and not answered:
            return False
        state = {"kind": KIND, "digest": digest[:16]}
        if answered:
            state["answered"] = answered
        self.issue = self.forge.ensure_issue(TITLE, body, LABELS, state)
        self._last_digest = digest
        return True


def _in_flight_row(t: TxnState) -> tuple[str, ...]:
    p = t.plan
    return (p.txn_id, p.app, t.phase.value, _pr(t.pr), str(p.attempt), _time(_started(t)))


def _outcome_row(t: TxnState) -> tuple[str, ...]:
    took = _duration(_ended(t) - _started(t))
    return (t.plan.txn_id, _outcome(t), _pr(t.pr), t.plan.strategy, took, str(t.plan.tokens))


def _open_incidents(txns: Iterable[TxnState]) -> list[tuple[str, str, int, str]]:
    by_incident: dict[str, list[TxnState]] = {}
    for t in txns:
        by_incident.setdefault(t.plan.incident, []).append(t)
    rows = []
    for incident, attempts in sorted(by_incident.items()):
        if any(t.outcome is Outcome.COMMITTED for t in attempts):
            continue
        last = max(attempts, key=lambda t: t.plan.attempt)
        rows.append((incident, last.plan.app, len(attempts), _outcome(last)))
    return rows


def _incident_rows(view: DashboardView) -> list[tuple[str, str, int, str]]:
    """Every journal incident not closed, with its attempts and latest outcome or status."""
    rows = []
    for row in view.incidents:
        if row.status in ("resolved", "gone"):
            continue
        attempts = [
            t
            for t in view.transactions
            if t.plan.incident == row.id and t.plan.strategy != "memory"
        ]
        last = max(attempts, key=lambda t: t.plan.attempt) if attempts else None
        latest = _outcome(last) if last is not None else row.status
        rows.append((row.id, row.app, len(attempts), f"{row.status}: {latest}"))
    return rows


def _incidents_table(rows: Sequence[tuple[str, str, int, str]]) -> str:
    return _table(
        ("Incident", "App", "Attempts", "Latest"),
        [(incident, app, str(n), latest) for incident, app, n, latest in rows],
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    if not rows:
        return "_None._"
    lines = [f"| {' | '.join(header)} |", f"|{'---|' * len(header)}"]
    lines += [f"| {' | '.join(cell(c) for c in row)} |" for row in rows]
    return "\n".join(lines)


def _outcome(t: TxnState) -> str:
    if t.outcome is Outcome.IN_FLIGHT:
        return f"in flight ({t.phase.value})"
    return f"{t.outcome.value}: {t.reason}" if t.reason else t.outcome.value


def _started(t: TxnState) -> float:
    return t.records[0].at if t.records else 0.0


def _ended(t: TxnState) -> float:
    return t.records[-1].at if t.records else 0.0


def _pr(number: int | None) -> str:
    return f"#{number}" if number is not None else "-"


def _time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"
