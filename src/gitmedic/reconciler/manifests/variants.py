"""The apps of a walk, each evaluated on its own, and variants of one object in one app.

A walked folder holds one or more apps (:mod:`.layout`). Objects of separate apps
(the dev and the prod overlay of one base, a chart and a kustomization of the same
service) are separate objects: each app is evaluated on its own.

Inside one app, two documents declaring the same object (API group, kind,
namespace, name) are alternative variants of it: an ``all-in-one.yaml`` next to
the split files, the release bundle next to the kustomization it was built from.
``kubectl apply`` keeps whichever it applies last; that is worth a warning naming
both places, and the first definition in load order is the one evaluated. It is
not an error (exit 2 is for what cannot be read). The loose files of a walk and a
kustomization or chart that no GitOps object deploys are compared too: the
release bundle beside the kustomize folder it came from is the same app twice.

Loose files that no GitOps object of the walk deploys are split into apps by
folder: a folder joins the app of a folder above or below it that declares one
of its objects (an all-in-one file above the split files: variants), else the
first app it shares no object with, else it starts one. So ``clusters/staging``
and ``clusters/production`` declaring the same Flux objects are two apps, while
``shop/frontend`` and ``shop/backend`` stay one, and a Service still sees the
Deployment of the next folder.

Objects named by ``generateName`` alone (Argo CD hook Jobs) are created anew each
time, so two with one prefix are two objects: the second is named ``prefix[2]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Obj
from gitmedic.detectors.spec import DetectorSpec, Scope
from gitmedic.reconciler.manifests.duplicates import object_key

__all__ = ["SPEC", "Part", "loose_apps", "settle"]

SPEC = DetectorSpec(
    id="object-variants",
    description=(
        "One app declares the same object in two places (an all-in-one file next to the "
        "split files): which one a cluster gets depends on the order they are applied."
    ),
    kinds=frozenset(),
    severity=Severity.WARNING,
    remediation=(
        "Keep one definition: delete the other file, or move the alternative out of the "
        "folder the app is deployed from."
    ),
    scope=Scope.DESIRED,
)
Key = tuple[str, str, str, str]


@dataclass
class Part:
    """One app of a walk: its objects in load order."""

    root: str  # the kustomization file, Chart.yaml or folder; "" for the loose files
    objects: list[Obj] = field(default_factory=list)
    deployed: bool = False  # a GitOps object of the walk deploys it
    loose: bool = False


@dataclass
class Settled:
    parts: list[list[Obj]]  # each app's objects, each object once
    objects: list[Obj]  # every app's, each identity once (the first app's)
    findings: list[Finding]


def settle(parts: Iterable[Part]) -> Settled:
    kept_parts: list[list[Obj]] = []
    findings: dict[Resource, list[Obj]] = {}
    firsts: list[tuple[Part, dict[Key, Obj]]] = []
    for part in parts:
        first: dict[Key, Obj] = {}
        for obj in _named(part.objects):
            kept = first.setdefault(object_key(obj), obj)
            if kept is not obj:
                findings.setdefault(kept.ref, [kept]).append(obj)
        kept_parts.append(list(first.values()))
        firsts.append((part, first))
    _across(firsts, findings)
    combined: dict[Key, Obj] = {}
    for _, first in firsts:  # each app's keys as computed above: an object's key once
        for key, obj in first.items():
            combined.setdefault(key, obj)
    variants = [_variant(objs) for objs in findings.values()]
    return Settled(kept_parts, list(combined.values()), variants)


def loose_apps(by_folder: dict[str, list[Obj]]) -> list[Part]:
    """The loose files' objects (by folder) as apps (see the module docstring)."""
    apps: list[tuple[Part, set[Key], set[str]]] = []
    for folder in sorted(by_folder):
        objs = by_folder[folder]
        keys = {object_key(o) for o in objs}
        home = next((a for a in apps if keys & a[1] and _nested(folder, a[2])), None)
        home = home or next((a for a in apps if not keys & a[1]), None)
        if home is None:
            home = (Part(folder, loose=True), set(), set())
            apps.append(home)
        home[0].objects.extend(objs)
        home[1].update(keys)
        home[2].add(folder)
    return [a[0] for a in apps] or [Part("", loose=True)]


def _nested(folder: str, folders: set[str]) -> bool:
    def under(a: str, b: str) -> bool:
        return b in ("", ".") or a == b or a.startswith(b + "/")

    return any(under(folder, f) or under(f, folder) for f in folders)


def _across(firsts: list[tuple[Part, dict[Key, Obj]]], found: dict[Resource, list[Obj]]) -> None:
    """The loose files against the kustomizations and charts nothing deploys."""
    loose = [f for p, f in firsts if p.loose]
    roots = [f for p, f in firsts if not p.loose and not p.deployed]
    for objs in loose:
        for key, obj in objs.items():
            other = next((r[key] for r in roots if key in r), None)
            if other is not None:
                places = found.setdefault(other.ref, [other])
                if obj not in places:
                    places.append(obj)


def _named(objects: list[Obj]) -> list[Obj]:
    """Objects with only a ``generateName``: the second of one prefix is ``prefix[2]``."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for obj in objects:
        if obj.metadata.get("name"):
            out.append(obj)
            continue
        count = seen[(obj.kind, obj.namespace, obj.name)] = (
            seen.get((obj.kind, obj.namespace, obj.name), 0) + 1
        )
        out.append(obj if count == 1 else replace(obj, ref=_renamed(obj.ref, count)))
    return out


def _renamed(ref: Resource, count: int) -> Resource:
    return Resource(ref.kind, ref.namespace, f"{ref.name}[{count}]", ref.api_version)


def _variant(objs: list[Obj]) -> Finding:
    """One warning per object, naming every place that declares it (the first is used)."""
    places = [_where(o) for o in objs]
    times = "twice" if len(places) == 2 else f"{len(places)} times"
    return SPEC.finding(
        objs[0].ref,
        f"{objs[0].ref} is defined {times} in one app: at {', '.join(places)}",
        rule="defined-twice",
        evidence=f"only {places[0]} is evaluated; a cluster gets whichever is applied last",
        params={"files": sorted({p.rsplit(":", 1)[0] for p in places})},
    )


def _where(obj: Obj) -> str:
    return f"{obj.source.file}:{obj.source.line}" if obj.source else "an earlier document"
