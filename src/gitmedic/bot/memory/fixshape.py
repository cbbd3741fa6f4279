"""The shape of a fix: which fields it changed, generalised into rules a detector can check.

A committed fix is a list of manifest edits. Against the pre-fix object, each
edit becomes *leaf changes* (a whole env list restored becomes the one env
value that differed). A leaf change is generalised into :class:`Rule` candidates,
most general first:

- the object: any workload (the path is taken relative to the pod spec, so a
  Deployment's fault also fires on a StatefulSet) or any object of the kind;
- list items selected by name (``containers[name=server]``) become wildcards
  that bind a param (``container``), list indexes bind ``<item>_index``; a
  second, narrower candidate keeps env var names literal;
- the invariant: the field is present at all (the fix removed it), absent (the
  fix added it), or holds the bad boolean (``equals``). Never a string or number
  value: a rule that matches the incident's bad value does not see the same fault
  with another value (a wrong tag, another bad URL), so only a built-in symptom
  refined by a lesson, or a structural invariant, is learned.

Never a literal object name: a value that names an object of the app (a host,
a ConfigMap) cannot be an ``equals`` rule, nor can a value that is, or may be, a
credential. Which candidate is right is decided by validation (the guard), not here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import Match, Path, lookup
from gitmedic.reconciler.redact import looks_secret_name, redact_text

POD_SPEC: dict[str, tuple[str, ...]] = {
    **{
        k: ("spec", "template", "spec")
        for k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")
    },
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}
WORKLOAD = "workload"
_PARAM = {
    "containers": "container",
    "initContainers": "container",
    "ephemeralContainers": "container",
    "env": "env",
    "ports": "port",
    "volumes": "volume",
    "volumeMounts": "volume_mount",
}


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class LeafChange:
    resource: Resource
    path: Path  # full path in the object
    bad: Any  # MISSING: the fix added the field
    good: Any  # MISSING: the fix removed the field


@dataclass(frozen=True)
class Wild:
    """A list segment: any item (binding ``bind``), or the item whose ``field`` is ``value``."""

    bind: str  # param name ("" for a literal item)
    field: str = "name"  # "" for an index wildcard
    value: str = ""  # a literal item's field value

    def to_json(self) -> dict[str, str]:
        return {"bind": self.bind, "field": self.field, "value": self.value}


PatternSeg = str | Wild


@dataclass(frozen=True)
class Rule:
    scope: str  # WORKLOAD or an object kind
    pattern: tuple[PatternSeg, ...]  # relative to the pod spec for workloads
    predicate: str  # equals | present | absent
    bad: Any  # equals: the bad (boolean) value
    good: Any  # the good value when it is safe to write, else MISSING
    change: LeafChange

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(s.bind for s in self.pattern if isinstance(s, Wild) and s.bind)

    def pattern_json(self) -> list[Any]:
        return [s.to_json() if isinstance(s, Wild) else s for s in self.pattern]


def leaf_changes(edits: Sequence[Edit], pre_fix: Snapshot) -> list[LeafChange]:
    """The fields the edits changed, down to leaves, judged against the pre-fix objects."""
    out: list[LeafChange] = []
    for edit in edits:
        body = _body(pre_fix, edit.resource)
        if body is None or edit.op in (Op.ADD_OBJECT, Op.REMOVE_OBJECT):
            continue
        found, before = lookup(body, edit.path)
        after = MISSING if edit.op is Op.REMOVE else edit.value
        if edit.op is Op.APPEND:
            after = [*(before if isinstance(before, list) else []), edit.value]
        out += [
            LeafChange(edit.resource, p, b, g)
            for p, b, g in _diff(before if found else MISSING, after, edit.path)
        ]
    return out


def _body(snapshot: Snapshot, ref: Resource) -> Any:
    obj = snapshot.get(ref.kind, ref.namespace, ref.name)
    if obj is None:
        matches = [o for o in snapshot.of_kind(ref.kind) if o.name == ref.name]
        obj = matches[0] if len(matches) == 1 else None
    return None if obj is None else obj.body


def _diff(before: Any, after: Any, path: Path) -> Iterator[tuple[Path, Any, Any]]:
    if before is not MISSING and after is not MISSING and _same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            yield from _diff(before.get(key, MISSING), after.get(key, MISSING), (*path, key))
        return
    names_before, names_after = _named(before), _named(after)
    if names_before is not None and names_after is not None:
        for name in [*names_before, *(n for n in names_after if n not in names_before)]:
            seg = Match("name", name)
            yield from _diff(
                names_before.get(name, MISSING), names_after.get(name, MISSING), (*path, seg)
            )
        return
    yield path, before, after


def _named(value: Any) -> dict[str, Any] | None:
    """A list of items with unique names, by name; None for any other value."""
    if not isinstance(value, list) or not all(
        isinstance(i, dict) and isinstance(i.get("name"), str) for i in value
    ):
        return None
    names = {i["name"]: i for i in value}
    return names if len(names) == len(value) else None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


# -- generalisation ------------------------------------------------------------------------


def rules_for(change: LeafChange, names: frozenset[str]) -> list[Rule]:
    """Rule candidates for one leaf change, most general first."""
    scope, relative = _scope(change)
    sensitive = _sensitive(change)
    out: list[Rule] = []
    for pattern in _patterns(relative):
        for predicate, bad, good in _invariants(change, names, sensitive):
            out.append(Rule(scope, pattern, predicate, bad, good, change))
    return out


def _scope(change: LeafChange) -> tuple[str, Path]:
    prefix = POD_SPEC.get(change.resource.kind)
    if prefix and tuple(change.path[: len(prefix)]) == prefix:
        return WORKLOAD, change.path[len(prefix) :]
    return change.resource.kind, change.path


def _patterns(path: Path) -> list[tuple[PatternSeg, ...]]:
    general = tuple(_generalise(path, keep_env=False))
    narrow = tuple(_generalise(path, keep_env=True))
    return [general] if narrow == general else [general, narrow]


def _generalise(path: Path, *, keep_env: bool) -> Iterator[PatternSeg]:
    used: set[str] = set()
    parent = ""
    for seg in path:
        if isinstance(seg, str):
            parent = seg
            yield seg
            continue
        if keep_env and parent == "env" and isinstance(seg, Match):
            yield Wild("", seg.field, seg.value)
            continue
        base = _PARAM.get(parent, _snake(parent) or "item")
        name = _unique(base if isinstance(seg, Match) else f"{base}_index", used)
        yield Wild(name, seg.field if isinstance(seg, Match) else "")


def _unique(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate in used or candidate in ("name", "namespace", "pod_spec"):
        candidate, n = f"{name}_{n}", n + 1
    used.add(candidate)
    return candidate


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", re.sub(r"(?<!^)([A-Z])", r"_\1", text).lower()).strip("_")


def _invariants(change: LeafChange, names: frozenset[str], sensitive: bool) -> list[Any]:
    bad, good = change.bad, change.good
    if bad is MISSING:
        return [("absent", None, _safe(good, names, sensitive))]
    out: list[tuple[str, Any, Any]] = []
    if isinstance(bad, bool) and not sensitive:
        out.append(("equals", bad, _safe(good, names, sensitive)))
    # Broader than equals (an explicit good value would fire): last. Never for a
    # credential: that one is set is configuration, not a fault.
    if good is MISSING and not sensitive:
        out.append(("present", None, MISSING))
    return out


def _safe(value: Any, names: frozenset[str], sensitive: bool) -> Any:
    """``value`` if it may be written into memory (no names, not a credential), else MISSING."""
    if value is MISSING or sensitive:
        return MISSING
    text = json.dumps(value, sort_keys=True, default=str)
    if redact_text(text) != text or names_in(text, names):
        return MISSING
    return value


def names_in(text: str, names: frozenset[str]) -> list[str]:
    """The object names of the app that ``text`` mentions as whole words."""
    return sorted(n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text))


def _sensitive(change: LeafChange) -> bool:
    if change.resource.kind == "Secret":
        return True
    for seg in change.path:
        text = seg.value if isinstance(seg, Match) else seg
        if isinstance(text, str) and looks_secret_name(text):
            return True
    return False
