"""Two configured apps in one namespace: fine while their objects are distinct.

A team may run two environments in one namespace (podinfo's dev and staging
overlays, kept apart by a ``namePrefix`` or ``nameSuffix`` each): each app is
evaluated on its own objects, and their fixes are kept apart as for any two
environments (:mod:`.environments`). When both apps render the same object
(kind, name and namespace), the cluster holds one of them, whichever was synced
last, and neither app's desired state says what runs: that is a configuration
error naming both apps and the object, never a silent merge.

Apps whose folders overlap (one inside the other) declare the same files and
are reported per object as defined twice (:mod:`.duplicates`), as before.

A neighbour that does not render (a broken kustomization) leaves its objects
unknown: nothing can say which of the namespace's objects are its, nor whether it
renders this app's. That is said (:attr:`Neighbours.unrendered`, with the file and
line of its first error), never read as a neighbour rendering nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.config import AppConfig, Config
from gitmedic.reconciler.manifests.duplicates import object_key
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.tree import LoadFailure

__all__ = ["Collision", "Neighbours", "Unrendered", "collisions", "neighbours", "overlapping"]


@dataclass(frozen=True)
class Collision:
    first: str  # app names, in config order
    second: str
    namespace: str
    objects: tuple[Resource, ...]  # what both render, sorted

    def message(self) -> str:
        shown = ", ".join(str(r) for r in self.objects[:3])
        more = f" and {len(self.objects) - 3} more" if len(self.objects) > 3 else ""
        return (
            f"apps {self.first} and {self.second} both render {shown}{more} "
            f"into namespace {self.namespace}: the cluster would hold one app's objects "
            "under the other's; give them distinct names (a namePrefix or nameSuffix in "
            "each overlay) or each its own namespace"
        )


def collisions(apps: Sequence[AppConfig], objects: Sequence[Sequence[Obj]]) -> list[Collision]:
    """Every pair of apps (non-overlapping folders, one namespace) rendering one object;
    ``objects[i]`` is what ``apps[i]`` renders."""
    keys = [{object_key(o): o.ref for o in objs} for objs in objects]
    out = []
    for i, a in enumerate(apps):
        for j in range(i + 1, len(apps)):
            b = apps[j]
            if not _together(a, b) or _overlap(a.path, b.path):
                continue
            both = sorted((keys[i][k] for k in keys[i].keys() & keys[j].keys()), key=_shown)
            if both:
                out.append(Collision(a.name, b.name, a.namespace, tuple(both)))
    return out


@dataclass(frozen=True)
class Unrendered:
    """A neighbour that does not render: which objects are its is not known."""

    app: str
    why: str  # its first error, ``file:line: message`` where the loader locates it


@dataclass(frozen=True)
class Neighbours:
    """The other apps of one app's namespace, as the work tree renders them."""

    rendered: tuple[Obj, ...]  # what they render (apps overlapping this one's folder left out)
    collision: Collision | None  # the first of them rendering one of this app's objects
    unrendered: tuple[Unrendered, ...] = ()  # those that do not render: their objects unknown
    own: tuple[Obj, ...] = ()  # what the app itself renders (empty when it is alone)

    def undivided(self, app: AppConfig) -> str:
        """Why ``app``'s objects cannot be told apart from its neighbours' ('' when they can)."""
        if not self.unrendered:
            return ""
        which = "; ".join(f"{u.app} does not render ({u.why})" for u in self.unrendered)
        return (
            f"cannot tell app {app.name}'s objects apart from its neighbours' in namespace "
            f"{app.namespace}: {which}; until it renders, only what {app.name} renders (and "
            "what that owns) is judged"
        )


def neighbours(root: Path, config: Config, app: AppConfig) -> Neighbours:
    """Renders each app of ``app``'s namespace once (apps in other namespaces not at all):
    what they render, for the live reading, and whether one renders ``app``'s objects."""
    siblings = [a for a in config.apps if _together(a, app) and a.name != app.name]
    siblings = [a for a in siblings if not _overlap(a.path, app.path)]
    if not siblings:
        return Neighbours((), None)
    mine, _ = _rendered(root, app)  # an app that does not render says so when it runs
    theirs = [(other, *_rendered(root, other)) for other in siblings]
    found = [c for other, objs, _ in theirs for c in collisions([app, other], [mine, objs])]
    return Neighbours(
        tuple(o for _, objs, _ in theirs for o in objs),
        found[0] if found else None,
        tuple(Unrendered(other.name, why) for other, _, why in theirs if why),
        tuple(mine),
    )


def _together(a: AppConfig, b: AppConfig) -> bool:
    """One namespace of one cluster (an app naming no cluster may be on any)."""
    return a.namespace == b.namespace and (not a.cluster or not b.cluster or a.cluster == b.cluster)


def _rendered(root: Path, app: AppConfig) -> tuple[list[Obj], str]:
    """What ``app`` renders, and its first error ('' when it renders): beside an error,
    what rendered is a part of the app (a collision still), never all of it."""
    try:
        state = load_desired(root / app.path, namespace=app.namespace, deployer=app.deployer)
    except LoadFailure as exc:  # the input as a whole: its message names the path
        return [], str(exc)
    if state.errors:
        return list(state.snapshot), str(state.errors[0])
    return list(state.snapshot), ""


def _shown(ref: Resource) -> tuple[bool, str]:
    """Workloads and Services first: the objects a reader recognises the app by."""
    return ref.kind not in _FIRST, str(ref)


_FIRST = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Service"})


def overlapping(a: str, b: str) -> bool:
    """One app folder inside the other (the root holds every folder)."""
    return _overlap(a, b)


def _overlap(a: str, b: str) -> bool:
    pa, pb = PurePosixPath(a.strip("/") or "."), PurePosixPath(b.strip("/") or ".")
    return str(pa) == "." or str(pb) == "." or pa.is_relative_to(pb) or pb.is_relative_to(pa)
