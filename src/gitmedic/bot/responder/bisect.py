"""Regression bisect: which commit introduced a finding, and which of its changes to undo.

For a finding visible in desired state, :func:`find_introduction` walks the app's
history back (commits touching the app's path, newest first, bounded), rendering
desired state at each commit's parent and running only the finding's detector;
the first commit C whose parent does not show the finding introduced it. A
finding present since the app's first commit has no introduction: nothing in
history is better.

:func:`bisect_fix` then restores only what matters: the commit's changes to the
implicated objects (the finding's resource and related objects) as leaf paths
(:mod:`.leaves`), and the objects C deleted or added. Candidates are tried
smallest first (single leaves, whole objects, pairs of leaves of one object, all
of one object's changes, all of them) and the first one that clears the finding
without a new finding in the re-parsed desired state wins, so a commit that also
carried good changes keeps them. When the winner is everything C changed in the
app, the fix is the same as reverting C, and the diagnosis says so.

When the commit did not change the finding's own objects in a way that clears it
(a Service that selects nothing because its workload was relabelled), the
search repeats over the objects they relate to (:mod:`.related`): the change is
restored where it was made, and the diagnosis says how that object relates.

Findings only the live state shows are blamed in :mod:`.live_blame`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gitmedic.bot.responder.leaves import changed_paths
from gitmedic.bot.responder.related import Relation, related_objects
from gitmedic.bot.responder.states import DesiredStates
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, blob_sha
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.history import restore_object
from gitmedic.reconciler.manifests.paths import (
    Path,
    format_path,
    item_position,
    parse_path,
)

MAX_PAIR_UNITS = 8  # pairs of leaves are tried only for objects with this few changes
POD_SPEC = {"Pod": "spec", "CronJob": "spec.jobTemplate.spec.template.spec"}


@dataclass(frozen=True)
class Introduction:
    commit: Commit
    parent: str
    walked: int


@dataclass(frozen=True)
class Unit:
    """One restorable change: a field of an object, or a whole object deleted or added."""

    ref: Resource
    path: Path | None = None  # None: the whole object
    added: bool = False  # the whole object was added by the commit (undo: remove it)

    def describe(self) -> str:
        if self.path is None:
            return f"{'remove' if self.added else 'restore'} {self.ref}"
        return f"{self.ref} {format_path(self.path)}"


def find_introduction(states: DesiredStates, finding: Finding, limit: int) -> Introduction | None:
    for walked, commit in enumerate(states.commits(limit), start=1):
        if not commit.parents or not states.has_app(commit.parents[0]):
            return None  # there since the app's first commit: a pre-existing fault
        if not states.visible(finding, commit.parents[0]):
            return Introduction(commit, commit.parents[0], walked)
    return None


def bisect_fix(ws: Workspace, finding: Finding, intro: Introduction) -> Fix | None:
    """The smallest undo of ``intro``'s change to the finding's objects that clears it,
    else of its change to the objects they relate to (:mod:`.related`)."""
    before, after = ws.states.at(intro.parent), ws.states.at(intro.commit.sha)
    own = list(dict.fromkeys([finding.resource, *finding.related]))
    everything = _units(ws, _changed_refs(before, after), before, after)
    fix = _search(ws, finding, intro, _units(ws, own, before, after), everything)
    if fix is not None:
        return fix
    snapshots = [before, ws.states.at(ws.head), after]
    relations = [r for r in related_objects(finding.resource, snapshots) if r.ref not in own]
    units = _units(ws, [r.ref for r in relations], before, after)
    if not units:
        return None
    fix = _search(ws, finding, intro, units, everything)
    return _with_relations(fix, relations) if fix is not None else None


def _search(
    ws: Workspace, finding: Finding, intro: Introduction, units: list[Unit], everything: list[Unit]
) -> Fix | None:
    for candidate in _candidates(units, everything):
        fix = _attempt(ws, finding, intro, candidate)
        if fix is not None:
            fix, candidate = _extended(ws, finding, intro, fix, candidate, units)
            whole = set(candidate) == set(everything)
            return _with_diagnosis(fix, finding, intro, candidate, whole)
    return None


def _with_relations(fix: Fix, relations: Sequence[Relation]) -> Fix:
    """The diagnosis says why an object the finding does not name was restored."""
    edited = {e.resource for e in fix.edits}
    why = "; ".join(f"{r.ref} is {r.why}" for r in relations if r.ref in edited)
    text = f"{fix.diagnosis} The finding's own object did not change there: {why}."
    return Fix(fix.strategy, fix.edits, fix.contents, text, commit=fix.commit, walked=fix.walked)


def _extended(
    ws: Workspace,
    finding: Finding,
    intro: Introduction,
    fix: Fix,
    chosen: tuple[Unit, ...],
    units: list[Unit],
) -> tuple[Fix, tuple[Unit, ...]]:
    """Add the other changed fields the finding depends on.

    The smallest clearing set may leave part of the fault behind (a probe made
    aggressive in three fields clears when one is restored); benchmarks judge the
    original values, so every changed field whose undo alone changes the finding
    (clears it, or changes its params) is restored too. Fields the detector does
    not look at (a label, another image) are not, and stay as the commit left them.
    """
    extra = tuple(u for u in units if u not in chosen and matters(ws, finding, intro, u))
    if not extra:
        return fix, chosen
    wider = _ordered((*chosen, *extra), units)
    bigger = _attempt(ws, finding, intro, wider)
    return (bigger, wider) if bigger is not None else (fix, chosen)


def matters(ws: Workspace, finding: Finding, intro: Introduction, unit: Unit) -> bool:
    try:
        edits, contents = restore_units(ws, [unit], intro.parent)
    except EditError:
        return False
    return bool(edits) and not ws.unchanged(finding, contents)


def commit_paths(
    ws: Workspace, finding: Finding, intro: Introduction, ref: Resource, paths: Sequence[Path]
) -> list[Path]:
    """``paths`` of ``ref`` widened to the whole of what ``intro`` changed about them.

    A recipe names the fields that hold a fault, but the commit may have changed
    more of the same group: added the whole ``affinity`` around the
    ``podAntiAffinity`` it names, a whole sidecar around the conflicting port, a
    ``type`` beside the ``rollingUpdate`` block. Restoring only the named fields
    would leave the rest, and the result would not be the original. So the
    commit's changed leaves of ``ref`` join when they contain a named path (they
    replace it), lie in the same field group (under its parent, unless that parent
    is a whole object section, pod spec or container), or their undo alone changes
    the finding (as in :func:`bisect_fix`). Other changes of the commit are kept.
    """
    before, after = _obj(ws.states.at(intro.parent), ref), _obj(ws.states.at(intro.commit.sha), ref)
    head = _obj(ws.states.at(ws.head), ref)
    if before is None or after is None or head is None:
        return list(paths)
    leaves = changed_paths(before.body, after.body)
    real = {p: _concrete(head.body, p) for p in [*paths, *leaves]}
    chosen = [
        leaf
        for leaf in leaves
        if any(_groups_with(real[leaf], real[p]) for p in paths)
        or matters(ws, finding, intro, Unit(ref, leaf))
    ]
    named = [p for p in paths if not any(_within(real[p], real[c]) for c in chosen)]
    wanted = [*named, *chosen]
    return [p for p in wanted if not any(q != p and _within(real[p], real[q]) for q in wanted)]


def _groups_with(leaf: tuple[object, ...], named: tuple[object, ...]) -> bool:
    parent = named[:-1]
    return _within(named, leaf) or (not _broad(parent) and _within(leaf, parent))


def _within(path: tuple[object, ...], ancestor: tuple[object, ...]) -> bool:
    return path[: len(ancestor)] == ancestor


def _broad(parent: tuple[object, ...]) -> bool:
    """A parent too wide to be one field group: a top-level section, the pod
    template or pod spec, a container."""
    pods = {parse_path(p) for p in ("spec.template", *POD_SPEC.values(), "spec.template.spec")}
    container = len(parent) >= 2 and parent[-2] in ("containers", "initContainers")
    return len(parent) < 2 or parent in pods or container


def _concrete(body: object, path: Path) -> tuple[object, ...]:
    """``path`` with list items as indexes into ``body`` (so ``containers[name=x]`` and
    ``containers[1]`` compare equal); segments past what ``body`` holds stay as given."""
    out: list[object] = []
    node: object = body
    for seg in path:
        pos = item_position(node, seg) if isinstance(node, list) else None
        if pos is not None and isinstance(node, list):
            out.append(pos)
            node = node[pos]
        elif isinstance(node, dict) and isinstance(seg, str) and seg in node:
            out.append(seg)
            node = node[seg]
        else:
            out.append(seg)
            node = None
    return tuple(out)


def _ordered(chosen: Sequence[Unit], units: list[Unit]) -> tuple[Unit, ...]:
    """``chosen`` in document order, so edits of one object are computed together."""
    rank = {u: i for i, u in enumerate(units)}
    return tuple(sorted(chosen, key=lambda u: rank.get(u, len(rank))))


def _units(
    ws: Workspace, refs: Sequence[Resource], before: Snapshot, after: Snapshot
) -> list[Unit]:
    out: list[Unit] = []
    for ref in refs:
        old, new = _obj(before, ref), _obj(after, ref)
        now = ws.file_of(ref) is not None
        if old is not None and new is not None and now:
            out += [Unit(ref, p) for p in changed_paths(old.body, new.body)]
        elif old is not None and new is None and not now:
            out.append(Unit(ref))
        elif old is None and new is not None and now:
            out.append(Unit(ref, added=True))
    return out


def _changed_refs(before: Snapshot, after: Snapshot) -> list[Resource]:
    old = {o.ref: o for o in before}
    new = {o.ref: o for o in after}
    refs = [r for r in old if r not in new or changed_paths(old[r].body, new[r].body)]
    return refs + [r for r in new if r not in old]


def _obj(snapshot: Snapshot, ref: Resource) -> Obj | None:
    return snapshot.get(ref.kind, ref.namespace, ref.name)


def _candidates(units: list[Unit], everything: list[Unit]) -> Iterator[tuple[Unit, ...]]:
    """Smallest first: single leaves and objects, pairs of one object's leaves, one
    object's changes, the implicated objects' changes, then the objects the commit
    deleted that the finding does not name (a caller of a deleted Service)."""
    seen: set[frozenset[Unit]] = set()
    by_ref: dict[Resource, list[Unit]] = {}
    for u in units:
        by_ref.setdefault(u.ref, []).append(u)
    deleted = [u for u in everything if u.path is None and not u.added and u not in units]
    pairs: list[tuple[Unit, ...]] = [
        p
        for us in by_ref.values()
        if len(us) <= MAX_PAIR_UNITS
        for p in itertools.combinations(us, 2)
    ]
    groups: list[list[tuple[Unit, ...]]] = [
        [(u,) for u in units],
        [(u,) for u in deleted],
        pairs,
        [tuple(us) for us in by_ref.values()],
        [tuple(units)] if units else [],
    ]
    for group in groups:
        for candidate in group:
            if frozenset(candidate) not in seen:
                seen.add(frozenset(candidate))
                yield candidate


def _attempt(
    ws: Workspace, finding: Finding, intro: Introduction, units: Sequence[Unit]
) -> Fix | None:
    try:
        edits, contents = restore_units(ws, units, intro.parent)
    except EditError:
        return None
    if not edits or not ws.check(finding, contents):
        return None
    return Fix("bisect", tuple(edits), contents, "", commit=intro.commit, walked=intro.walked)


def restore_units(
    ws: Workspace, units: Sequence[Unit], rev: str
) -> tuple[list[Edit], dict[str, str]]:
    """Edits putting ``units`` back as they were at ``rev``, computed one after the other."""
    edits: list[Edit] = []
    contents: dict[str, str] = {}
    for ref, group in itertools.groupby(units, key=lambda u: (u.ref, u.path is None, u.added)):
        step = _restore(ws, ref[0], [u for u in group], rev, contents)
        contents = ws.applied(step, contents)
        edits += step
    return edits, contents


def _restore(
    ws: Workspace, ref: Resource, units: list[Unit], rev: str, contents: dict[str, str]
) -> list[Edit]:
    repo = ws.overlay(contents)
    if units[0].path is not None:
        paths = [u.path for u in units if u.path is not None]
        return ws.restore(ref, paths, rev, contents)
    if units[0].added:
        file = ws.file_of(ref)
        return (
            [Edit(Op.REMOVE_OBJECT, file, ref).with_base(_blob(ws, file, contents))] if file else []
        )
    file = ws.file_of(ref, rev)
    return [restore_object(repo, ref, rev, file)] if file else []


def _blob(ws: Workspace, file: str, contents: dict[str, str]) -> str:
    return blob_sha(ws.content(file, contents).encode("utf-8"))


def _with_diagnosis(
    fix: Fix, finding: Finding, intro: Introduction, units: Sequence[Unit], whole: bool
) -> Fix:
    c = intro.commit
    what = "; ".join(u.describe() for u in units)
    text = (
        f"{finding.summary} ({finding.detector}). Introduced by {c.sha[:12]} "
        f'"{c.subject}" ({c.author}); restored to its parent: {what}. Proof: with that '
        "undone, the re-rendered desired state no longer shows the finding, and shows no new one."
    )
    if whole:
        text += " That commit changed nothing else in the app: this equals reverting it."
    else:
        text += " Its other changes are kept."
    return Fix(fix.strategy, fix.edits, fix.contents, text, commit=c, walked=intro.walked)
