"""A live symptom whose evidence names what a quiet desired-state finding names: its cause.

Some desired-state findings are rightly quiet. An env address to a host that no
Service of the namespace names, when nothing of that name runs there either, is
info: most often an optional component the manifests do not ship (online-boutique's
shopping assistant), so alone it is no fault and opens no incident. But when the
live state shows the symptom of that very thing on the same part of the app (an
alert whose evidence reads ``user -> sock-shop/user-dbx: no such Service (DNS lookup
fails)``), the quiet finding is the symptom's cause, and a provable one: bisect
finds the commit that introduced it and the smallest restore that clears it in
the re-rendered desired state, as for any desired-state finding.

A desired-state finding at HEAD corroborates a live one when

1. it is on the live finding's object, one the live finding relates, one that
   object relates to (one hop, :mod:`.related`), or one of its namespace that the
   live evidence names (a call path ``frontend -> checkoutservice -> boutique/cartsvc``
   names the caller whose address is wrong);
2. one of its parameter values, other than the names of those objects, their
   namespace and the container, is a word of the live finding's summary or
   evidence (the host ``user-dbx``);
3. a commit introduced it: one there since the app's first commit is the app's own
   and explains no new symptom.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gitmedic.bot.responder.bisect import bisect_fix, find_introduction
from gitmedic.bot.responder.implicated import string_values
from gitmedic.bot.responder.related import related_objects
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource

# Parameters that say where a finding is, never what it is about.
_WHERE = frozenset({"container", "container_field", "namespace", "path", "kind"})


def corroborated_fix(ws: Workspace, live: Finding, limit: int) -> tuple[Fix, Finding] | None:
    """The restore of the desired-state finding that ``live``'s evidence corroborates, with
    that finding (what the restore is proven against), or None (see the module docstring)."""
    words = set(re.findall(r"[A-Za-z0-9_.-]+", f"{live.summary} {live.evidence}"))
    near = _near(ws, live, words)
    causes = [f for f in ws.states.findings(ws.head) if f.resource in near]
    for cause in sorted(causes, key=lambda f: (-f.severity.rank, f.sort_key)):
        if cause.detector == live.detector or not _subjects(cause, near) & words:
            continue
        intro = find_introduction(ws.states, cause, limit)
        fix = bisect_fix(ws, cause, intro) if intro is not None else None
        if fix is not None:
            return _explained(fix, live, cause), cause
    return None


def _near(ws: Workspace, live: Finding, words: set[str]) -> frozenset[Resource]:
    own = {live.resource, *live.related}
    head = ws.states.at(ws.head)
    named = {o.ref for o in head if o.namespace == live.resource.namespace and o.name in words}
    related = {r.ref for r in related_objects(live.resource, [head])}
    return frozenset({*own, *related, *named})


def _subjects(cause: Finding, near: frozenset[Resource]) -> set[str]:
    """What ``cause`` is about: its parameter values, the places it names left out."""
    places = {r.name for r in near} | {r.namespace for r in near}
    about = {k: v for k, v in cause.params.items() if k not in _WHERE}
    return {v for v in string_values(about) if v and v not in places}


def _explained(fix: Fix, live: Finding, cause: Finding) -> Fix:
    seen = f" ({live.evidence[:200]})" if live.evidence else ""
    text = (
        f"{live.detector} on {live.resource}{seen} is what {cause.detector} on "
        f"{cause.resource} describes ({cause.summary}), so that finding, "
        f"{cause.severity.value} alone, is the cause. {fix.diagnosis}"
    )
    return replace(fix, diagnosis=text)
