"""Restores touch only what a finding implicates: never a neighbour that came in the same commit.

A restore strategy may put back more than the faulty field: a recipe names a
whole list (``env-shadowed`` restores the container's ``env``), bisect and the
playbook widen to the field group the introducing commit changed, and a
live-only restore takes every change to the container. When that commit also
carried legitimate changes (``DB_PASSWORD`` and ``MYSQL_PWD`` added beside a
broken ``REDIS_URL``), restoring the group deletes them. So every restore fix is
narrowed here before it is accepted.

The units are the *items* the fix changes inside each edited object: entries of
named lists (env vars, volumes, ports, containers; a list whose names repeat is
aligned by content, so a shadowing duplicate is one item) and keys of mappings
the fix would delete from an entry map (a ConfigMap key, a label added by the
commit; not a field group like ``strategy``, restored whole). A unit is
**implicated** when the finding names it (its name is one of the finding's
parameter values, or a word of its summary), or the item names what the finding
says is wrong (one of its values is a parameter value of the finding: the env var
whose ``secretKeyRef`` names the Secret a pod-config-error finds missing), or,
for a finding the desired state shows, when undoing that unit alone clears the
finding (the fault is in it: an anti-affinity block the commit added) or the fix
no longer clears it without the unit. Every other unit is a stray: the narrowed
fix leaves it as it is at HEAD. Plain fields of an implicated object (a probe's
thresholds, an image) are the strategy's call and stay as it chose.

The narrowed fix is rebuilt from small edits on the collections that held
strays: removals at the item's position, and restores of the implicated items
from the good revision by name (exact bytes, through
:func:`~gitmedic.reconciler.manifests.history.restore_fields`). A fix that
cannot be narrowed cleanly (the strays sit under a wider edit, or the narrowed
fix no longer clears the finding) is refused, so the next strategy is tried.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.documents import EditError, blob_sha
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.history import restore_fields
from gitmedic.reconciler.manifests.paths import Match, Path, format_path, lookup

DROP, ADD, CHANGE = "drop", "add", "change"
# Mappings whose keys are independent entries (a ConfigMap's keys, labels), unlike a
# field group such as a rollout strategy, whose keys the strategy restores together.
ENTRY_MAPS = frozenset({"data", "stringData", "binaryData", "labels", "annotations"})
_OBJECT_OPS = (Op.ADD_OBJECT, Op.REMOVE_OBJECT)


@dataclass(frozen=True)
class Unit:
    """One item the fix changes: in ``collection`` (a list or mapping path) of ``ref``."""

    ref: Resource
    collection: Path
    name: str  # the item's name, or the mapping key
    kind: str  # drop (at HEAD, gone after the fix) | add | change
    index: int | None = None  # drop from a list: the item's position at HEAD
    keyed: bool = False  # a mapping key rather than a named list item

    def describe(self) -> str:
        return f"{self.ref} {format_path(self.collection)} {self.name} ({self.kind})"


def implicated_only(ws: Workspace, finding: Finding, fix: Fix) -> Fix | None:
    """``fix`` changing only what ``finding`` implicates (itself when it already does)."""
    if fix.commit is None or not fix.commit.parents:
        return fix  # values set from a recipe's fallback: no neighbour is restored
    units = list(changed_items(ws, fix))
    named = words_of(finding)
    referenced = frozenset(string_values(finding.params))
    holds = _Holders(ws, fix, referenced)
    strays = [u for u in units if u.name not in named and not holds(u)]
    if not strays:
        return fix
    desired = ws.states.judges(finding) and ws.states.visible(finding, ws.head)
    if desired:  # what the detector judges: an item whose undo alone clears the finding
        strays = [u for u in strays if not _alone_clears(ws, finding, good_of(fix), u)]
    else:  # nothing can test necessity: only deletions are held back
        strays = [u for u in strays if u.kind == DROP]
    if not strays:
        return fix
    kept = [u for u in units if u not in strays]
    return _narrowed(ws, finding, fix, good_of(fix), kept, strays, desired)


def good_of(fix: Fix) -> str:
    """The revision a restore puts things back from: the introducing commit's parent."""
    assert fix.commit is not None and fix.commit.parents
    return fix.commit.parents[0]


def _alone_clears(ws: Workspace, finding: Finding, good: str, unit: Unit) -> bool:
    """Does undoing ``unit`` alone, from HEAD, clear the finding (the fault is in it)?"""
    try:
        edits = _item_edits(ws, unit.ref, unit.collection, [unit], good, {})
        return bool(edits) and not ws.present(finding, ws.applied(edits, {}))
    except EditError:
        return False


def changed_items(ws: Workspace, fix: Fix) -> Iterator[Unit]:
    """The items ``fix`` changes in each object it edits in place."""
    before = ws.states.with_files(ws.head, ws.contents)
    after = ws.states.with_files(ws.head, {**ws.contents, **fix.contents})
    refs = dict.fromkeys(e.resource for e in fix.edits if e.op not in _OBJECT_OPS)
    for ref in refs:
        old = before.get(ref.kind, ref.namespace, ref.name)
        new = after.get(ref.kind, ref.namespace, ref.name)
        if old is not None and new is not None:
            yield from _walk(ref, old.body, new.body, ())


def words_of(finding: Finding) -> frozenset[str]:
    """The names a finding implicates: its parameter values and the words of its summary."""
    words: set[str] = set(re.findall(r"[A-Za-z0-9_.-]+", finding.summary))
    words.update(_strings(finding.params))
    words.update(r.name for r in (finding.resource, *finding.related))
    return frozenset(words)


def string_values(value: Any) -> Iterator[str]:
    """The string values in a finding's parameters (not their keys), at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from string_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from string_values(item)


class _Holders:
    """Whether an item holds one of ``referenced`` as a value: at HEAD, or as the fix
    leaves it for an item the fix adds back. Each of the two states is built once per
    fix, not once per item (a rendered app is rendered again to build one)."""

    def __init__(self, ws: Workspace, fix: Fix, referenced: frozenset[str]) -> None:
        self.ws, self.fix, self.referenced = ws, fix, referenced
        self._states: dict[bool, Snapshot] = {}

    def __call__(self, unit: Unit) -> bool:
        if not self.referenced:
            return False
        ref = unit.ref
        obj = self._state(unit.kind == ADD).get(ref.kind, ref.namespace, ref.name)
        if obj is None:
            return False
        where: Any = unit.name if unit.keyed else Match("name", unit.name)
        found, item = lookup(obj.body, (*unit.collection, where))
        return found and bool(self.referenced & set(string_values(item)))

    def _state(self, fixed: bool) -> Snapshot:
        if fixed not in self._states:
            ws = self.ws
            contents = {**ws.contents, **self.fix.contents} if fixed else ws.contents
            self._states[fixed] = ws.states.with_files(ws.head, contents)
        return self._states[fixed]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):  # a selector's keys name labels as much as its values
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


# -- the items a fix changes --------------------------------------------------------------


def _walk(ref: Resource, old: Any, new: Any, path: Path) -> Iterator[Unit]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old:
            if key not in new:
                if path[-1:] and path[-1] in ENTRY_MAPS:
                    yield Unit(ref, path, str(key), DROP, keyed=True)
            elif old[key] != new[key]:
                yield from _walk(ref, old[key], new[key], (*path, str(key)))
    elif isinstance(old, list) and isinstance(new, list):
        yield from _walk_list(ref, old, new, path)


def _walk_list(ref: Resource, old: list[Any], new: list[Any], path: Path) -> Iterator[Unit]:
    if not _named(old) or not _named(new):
        return  # plain values (a command, ports by number): one field, the strategy's call
    old_names, new_names = [i["name"] for i in old], [i["name"] for i in new]
    if len(set(old_names)) == len(old_names) and len(set(new_names)) == len(new_names):
        yield from _by_name(ref, old, new, path)
        return
    # Names repeat (a shadowing duplicate): align the items by their content.
    matcher = difflib.SequenceMatcher(a=[_key(i) for i in old], b=[_key(i) for i in new])
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            yield from (Unit(ref, path, str(old[i]["name"]), DROP, i) for i in range(a1, a2))
        if tag in ("insert", "replace"):
            yield from (Unit(ref, path, str(new[i]["name"]), ADD) for i in range(b1, b2))


def _by_name(ref: Resource, old: list[Any], new: list[Any], path: Path) -> Iterator[Unit]:
    now = {str(i["name"]): i for i in new}
    for index, item in enumerate(old):
        name = str(item["name"])
        if name not in now:
            yield Unit(ref, path, name, DROP, index)
        elif item != now[name]:
            inner = list(_walk(ref, item, now[name], (*path, Match("name", name))))
            yield from inner or [Unit(ref, path, name, CHANGE)]
    was = {str(i["name"]) for i in old}
    yield from (Unit(ref, path, n, ADD) for n in now if n not in was)


def _named(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, Mapping) and "name" in i for i in items)


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


# -- the narrowed fix ---------------------------------------------------------------------


def _narrowed(
    ws: Workspace,
    finding: Finding,
    fix: Fix,
    good: str,
    kept: list[Unit],
    strays: list[Unit],
    desired: bool,
) -> Fix | None:
    """The fix rebuilt without ``strays``; a stray it cannot do without is implicated."""
    while strays:
        rebuilt = _rebuild(ws, fix, good, kept, strays)
        if rebuilt is not None and (not desired or ws.check(finding, rebuilt[1])):
            edits, contents = rebuilt
            held = "; ".join(u.describe() for u in strays)
            text = f"{fix.diagnosis} Left as they are (no finding implicates them): {held}."
            return Fix(
                fix.strategy,
                tuple(edits),
                contents,
                text,
                fix.playbook,
                fix.commit,
                fix.walked,
                fix.findings,
            )
        needed = _first_needed(ws, finding, fix, good, kept, strays) if desired else None
        if needed is None:
            return None
        strays.remove(needed)
        kept.append(needed)
    return fix  # every item it changes turned out to be needed: implicated


def _first_needed(
    ws: Workspace, finding: Finding, fix: Fix, good: str, kept: list[Unit], strays: list[Unit]
) -> Unit | None:
    """The first stray without whose undo the finding stays (it is implicated after all)."""
    for unit in strays:
        rest = [u for u in strays if u != unit]
        rebuilt = _rebuild(ws, fix, good, [*kept, unit], rest)
        if rebuilt is not None and ws.check(finding, rebuilt[1]):
            return unit
    return None


def _rebuild(
    ws: Workspace, fix: Fix, good: str, kept: list[Unit], strays: list[Unit]
) -> tuple[list[Edit], dict[str, str]] | None:
    """The fix's edits off the strays' collections, then small edits for the kept items there."""
    collections = {(u.ref, u.collection) for u in strays}
    untouched = [e for e in fix.edits if not any(_covers(e, c) for c in collections)]
    if any(_above(e, c) for e in fix.edits for c in collections):
        return None  # a wider edit holds the strays: no clean way to keep them
    try:
        edits, contents = _rebased(ws, untouched, {})
        for ref, collection in sorted(collections, key=lambda c: (str(c[0]), str(c[1]))):
            mine = [u for u in kept if (u.ref, u.collection) == (ref, collection)]
            step = _item_edits(ws, ref, collection, mine, good, contents)
            contents = ws.applied(step, contents)
            edits += step
    except EditError:
        return None
    return (edits, contents) if edits else None


def _rebased(
    ws: Workspace, edits: Sequence[Edit], contents: dict[str, str]
) -> tuple[list[Edit], dict[str, str]]:
    """``edits`` applied in order, each based on the content it now applies to."""
    out: list[Edit] = []
    for edit in edits:
        based = edit.with_base(blob_sha(ws.content(edit.file, contents).encode("utf-8")))
        contents = ws.applied([based], contents)
        out.append(based)
    return out, contents


def _item_edits(
    ws: Workspace,
    ref: Resource,
    collection: Path,
    units: list[Unit],
    good: str,
    contents: dict[str, str],
) -> list[Edit]:
    """Edits doing ``units`` (the implicated items of one collection) and nothing else."""
    file = ws.file_of(ref)
    if file is None:
        raise EditError(f"{ref} is in no file at HEAD")
    edits: list[Edit] = []
    drops = sorted((u for u in units if u.kind == DROP), key=lambda u: -(u.index or 0))
    for unit in drops:  # from the end, so earlier positions stay valid
        where: Any = unit.name if unit.keyed else unit.index
        edit = Edit(Op.REMOVE, file, ref, (*collection, where))
        edit = edit.with_base(blob_sha(ws.content(file, contents).encode("utf-8")))
        contents = ws.applied([edit], contents)
        edits.append(edit)
    paths = [(*collection, Match("name", u.name)) for u in units if u.kind != DROP]
    if paths:
        edits += restore_fields(ws.overlay(contents), ref, list(paths), good, file)
    return edits


def _covers(edit: Edit, collection: tuple[Resource, Path]) -> bool:
    """``edit`` changes the collection or something inside it."""
    ref, path = collection
    return edit.resource == ref and tuple(edit.path[: len(path)]) == tuple(path)


def _above(edit: Edit, collection: tuple[Resource, Path]) -> bool:
    """``edit`` replaces something wider than the collection (a whole container)."""
    ref, path = collection
    return (
        edit.resource == ref
        and len(edit.path) < len(path)
        and tuple(path[: len(edit.path)]) == tuple(edit.path)
        and edit.op is not Op.REMOVE_OBJECT
    )
