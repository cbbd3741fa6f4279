"""A live namespace shared by two apps: each app's loop reads only its own objects.

Two environments may share one namespace, kept apart by a ``namePrefix`` each
(:mod:`gitmedic.reconciler.manifests.shared_namespace` refuses them when their
objects collide). The sim deploys only the app it runs, but a live read lists the
whole namespace, so without this each app's loop would see the other's pods
crash, open an incident for them and look for the cause in its own files.

What a sibling app renders (its desired state at the work tree) is left out of
this app's live snapshots, with what those objects own (a Deployment's
ReplicaSets and their pods, a Service's EndpointSlices), a Service's Endpoints
(same name, no owner) and the Events about any of them. Everything else stays:
objects no app renders (a Node, a PVC made by hand) are still this app's to see.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitmedic.detectors.snapshot import Obj, Snapshot

Key = tuple[str, str]  # kind, name (one namespace)


def sibling_keys(rendered: Iterable[Obj]) -> frozenset[Key]:
    """The keys of what the other apps of the namespace render
    (:func:`~gitmedic.reconciler.manifests.shared_namespace.neighbours`)."""
    return frozenset((o.kind, o.name) for o in rendered)


def without_siblings(snapshot: Snapshot, siblings: frozenset[Key]) -> Snapshot:
    """``snapshot`` without the siblings' objects, what they own and the Events about them."""
    if not siblings:
        return snapshot
    theirs = _owned_closure(list(snapshot), set(siblings))
    kept = [o for o in snapshot if not _is_theirs(o, theirs)]
    if len(kept) == len(snapshot):
        return snapshot
    return Snapshot(
        kept,
        mode=snapshot.mode,
        revision=snapshot.revision,
        taken_at=snapshot.taken_at,
        schema=snapshot.schema,
    )


def _owned_closure(objects: Iterable[Obj], theirs: set[Key]) -> set[Key]:
    """``theirs`` and everything owned through ownerReferences, transitively."""
    pending = [o for o in objects if o.kind != "Event"]
    grew = True
    while grew:  # a pod's owner (a ReplicaSet) is found only once its Deployment was
        grew = False
        for obj in pending:
            key = (obj.kind, obj.name)
            if key not in theirs and any(_owner(ref) in theirs for ref in _owners(obj)):
                theirs.add(key)
                grew = True
    return theirs


def _is_theirs(obj: Obj, theirs: set[Key]) -> bool:
    if obj.kind == "Event":
        involved = obj.body.get("involvedObject") or {}
        return (str(involved.get("kind", "")), str(involved.get("name", ""))) in theirs
    if obj.kind == "Endpoints":  # named after its Service, and owned by none
        return ("Service", obj.name) in theirs
    return (obj.kind, obj.name) in theirs


def _owners(obj: Obj) -> list[dict[str, object]]:
    refs = obj.metadata.get("ownerReferences") or []
    return [r for r in refs if isinstance(r, dict)]


def _owner(ref: dict[str, object]) -> Key:
    return str(ref.get("kind", "")), str(ref.get("name", ""))
