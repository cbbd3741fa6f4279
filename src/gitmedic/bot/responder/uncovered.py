"""The rest of the commit that brought a fault: what a retry restores when a fix uncovers more.

One commit breaks a Service's selector and the readiness probe of the workload
behind it. The first candidate restores the selector, as its findings asked.
Deployed, the Service selects the workload again, whose pods are not Ready: the
oracles see the Service with no endpoints and the workload's replicas
unavailable, new since the checkpoint, so the candidate is undone. No strategy
explains that by itself (the Service did not change again, the workload's
probe changed in the same commit, not a later one), and a fresh proposal
restores the selector alone once more.

The retry keeps the undone candidate's edits and restores, from the same
introducing commit, the other fields it changed on the objects the oracles'
feedback implicates: the objects of the findings the candidate caused, those
findings' related objects, and every ``Kind/namespace/name`` the feedback names.
A field is restored only where it still holds what the commit set (nothing
since changed it, the candidate did not restore it). Proof as for every
restore: the edits apply to the files at HEAD, and the re-rendered desired
state shows no finding that HEAD with the candidate did not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from gitmedic.bot.responder.bisect import Unit, restore_units
from gitmedic.bot.responder.leaves import changed_paths
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.bot.responder.states import key
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, same
from gitmedic.reconciler.manifests.paths import format_path, lookup

_NAMED = re.compile(r"\b([A-Z][A-Za-z]+)/([a-z0-9][a-z0-9.-]*)/([a-z0-9][a-z0-9.-]*)")


def uncovered_fix(
    ws: Workspace, undone: Proposal, caused: Sequence[Finding], feedback: Sequence[str] = ()
) -> Fix | None:
    """The other fields the undone candidate's introducing commit changed on what the
    oracles implicate, restored on top of the candidate (already accepted in ``ws``)."""
    commit = _introducing(ws, undone)
    if commit is None:
        return None
    parent = commit.parents[0]
    units = _units(ws, commit, implicated(caused, feedback))
    if not units:
        return None
    before = {key(f) for f in ws.states.findings_of(ws.states.with_files(ws.head, ws.contents))}
    try:
        edits, contents = restore_units(ws, units, parent)
    except EditError:
        return None
    snap = ws.states.with_files(ws.head, {**ws.contents, **contents})
    if not edits or not {key(f) for f in ws.states.findings_of(snap)} <= before:
        return None
    what = "; ".join(u.describe() for u in units)
    text = (
        f'Introduced by the same commit {commit.sha[:12]} "{commit.subject}" '
        f"({commit.author}), on what the oracles implicated once the candidate ran: "
        f"{what}; restored to its parent. Proof: the re-rendered desired state shows "
        "no new finding."
    )
    return Fix("bisect", tuple(edits), contents, text, commit=commit)


def implicated(caused: Sequence[Finding], feedback: Sequence[str]) -> tuple[Resource, ...]:
    """The objects the caused findings are on or relate to, and those the feedback names."""
    refs: dict[Resource, None] = {}
    for finding in caused:
        refs.update(dict.fromkeys((finding.resource, *finding.related)))
    for line in feedback:
        for kind, namespace, name in _NAMED.findall(line):
            refs.setdefault(Resource(kind, namespace, name))
    return tuple(r for r in refs if r.kind != "Pod")


def _introducing(ws: Workspace, undone: Proposal) -> Commit | None:
    if undone.commit is None:
        return None
    sha = ws.states.resolve(undone.commit.sha)
    return next((c for c in ws.states.commits(200) if c.sha == sha and c.parents), None)


def _units(ws: Workspace, commit: Commit, refs: Iterable[Resource]) -> list[Unit]:
    """The fields ``commit`` changed on ``refs`` that still hold what it set."""
    parent = commit.parents[0]
    now = ws.states.with_files(ws.head, ws.contents)
    out: list[Unit] = []
    for ref in refs:
        old = ws.states.at(parent).get(ref.kind, ref.namespace, ref.name)
        new = ws.states.at(commit.sha).get(ref.kind, ref.namespace, ref.name)
        cur = now.get(ref.kind, ref.namespace, ref.name)
        if old is None or new is None or cur is None:
            continue
        for path in changed_paths(old.body, new.body):
            set_by_commit, value = lookup(new.body, path)
            still, current = lookup(cur.body, path)
            if set_by_commit == still and same(value, current):
                out.append(Unit(ref, path))
    return sorted(out, key=lambda u: (str(u.ref), format_path(u.path or ())))
