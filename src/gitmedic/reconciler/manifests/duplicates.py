"""Objects defined twice across configured apps whose folders overlap: kept once,
reported once as an error. (Inside one walk, an object declared twice in one app is a
warning, :mod:`.variants`; the same object in two apps of the walk is two objects.)

Two documents that declare the same object (API group, kind, namespace, name)
make the desired state ambiguous: ``kubectl apply`` keeps whichever it applies
last, Argo CD reports the resource as repeated. Counting both would also make
detectors see two workloads behind every Service (online-boutique read from its
root holds the kustomize copy and the release bundle of each object). The first
definition in load order is kept, and each further one is one error at its own
file and line that names the first's.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.manifests.parse import ManifestError

__all__ = ["object_key", "unique_objects"]


def unique_objects(objects: Iterable[Obj]) -> tuple[list[Obj], list[ManifestError]]:
    """The objects with each identity kept once, and one error per repeat."""
    first: dict[tuple[str, str, str, str], Obj] = {}
    errors: list[ManifestError] = []
    for obj in objects:
        kept = first.setdefault(object_key(obj), obj)
        if kept is not obj:
            errors.append(_repeat(kept, obj))
    return list(first.values()), errors


def object_key(obj: Obj) -> tuple[str, str, str, str]:
    """What makes two documents one object: API group, kind, namespace, name."""
    return (_group(obj.ref.api_version), obj.kind, obj.namespace, obj.name)


def _repeat(kept: Obj, again: Obj) -> ManifestError:
    where = f"{kept.source.file}:{kept.source.line}" if kept.source else "an earlier document"
    file, line = (again.source.file, again.source.line) if again.source else ("", 0)
    return ManifestError(
        file,
        line,
        f"{kept.ref} is defined twice: at {where} and here; only the first is used",
    )


def _group(api_version: str) -> str:
    """The API group: ``apps/v1`` and ``apps/v1beta1`` name the same object, ``v1`` is core."""
    return api_version.rpartition("/")[0]
