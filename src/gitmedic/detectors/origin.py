"""Where a rendered field's value was written: a values file, its key path and line.

A Helm chart's objects are rendered from templates; the line a person edits to
change ``spec.replicas`` is ``replicaCount: 3`` in a values file, not the
template. The loader records, per rendered object, which fields a values key
feeds; a finding about a field is then located at that values line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from gitmedic.detectors.finding import Resource


class FieldLines(Protocol):
    """The lines of one object's fields in the file it was read from."""

    def line_of(self, path: str) -> int | None:
        """The line of the deepest field of ``path`` the object has (``spec.ports[0]``,
        ``spec.ports.0`` alike); None when it has not even the first."""
        ...


@dataclass(frozen=True)
class FieldOrigin:
    path: str  # the rendered field, dotted with [i] indexes: spec.template.spec.containers[0].image
    file: str  # the values file that sets it (the last one in order that does)
    line: int  # 1-based line of the key in that file
    key: str  # the values key path: resources.limits.memory
    keys: tuple[str, ...] = ()  # the same key path, one segment per key (keys may hold dots)
    # values inside a manifest (a HelmRelease's spec.values, a ConfigMap's data key): that
    # object and where the values sit in it; None for a values file
    holder: Resource | None = None
    prefix: tuple[str, ...] = ()
    editable: bool = True  # False: the values are a YAML string in the holder
    # an Argo CD Application's helm parameter (--set) setting the key: the item of the
    # holder's list at ``prefix`` whose name this is
    parameter: str = ""


def origin_of(origins: Iterable[FieldOrigin], path: str) -> FieldOrigin | None:
    """The origin of ``path``: the field itself, else the first field below it, else the
    nearest field above it (a whole map rendered from one key by ``toYaml``)."""
    below: FieldOrigin | None = None
    above: FieldOrigin | None = None
    for o in origins:
        if o.path == path:
            return o
        if below is None and _within(o.path, path):
            below = o
        elif _within(path, o.path) and (above is None or len(o.path) > len(above.path)):
            above = o
    return below or above


def _within(inner: str, outer: str) -> bool:
    return inner.startswith(outer) and inner[len(outer) : len(outer) + 1] in (".", "[")
