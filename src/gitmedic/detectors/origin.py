"""Where a rendered field's value was written: a values file, its key path and line.

A Helm chart's objects are rendered from templates; the line a person edits to
change ``spec.replicas`` is ``replicaCount: 3`` in a values file, not the
template. The loader records, per rendered object, which fields a values key
feeds; a finding about a field is then located at that values line.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Protocol, overload

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


class LazyOrigins(Sequence[FieldOrigin]):
    """A rendered object's field origins, found the first time they are read.

    A chart's origins cost a second ``helm template`` (the marked render of
    :mod:`gitmedic.reconciler.manifests.helm_trace`); only a finding about a field of
    the object (or a fix editing its values) reads them, and most runs have none, so
    the render waits for the first reader. ``key`` stands for what the origins are
    computed from (the chart's inputs and the object), so two loads of the same chart
    compare equal without rendering."""

    __slots__ = ("_find", "_found", "_key", "_lock")

    def __init__(self, find: Callable[[], tuple[FieldOrigin, ...]], key: Hashable) -> None:
        self._find = find
        self._key = key
        self._found: tuple[FieldOrigin, ...] | None = None
        self._lock = Lock()  # a chart's objects may be read from two threads

    def _all(self) -> tuple[FieldOrigin, ...]:
        if self._found is None:
            with self._lock:
                if self._found is None:
                    self._found = self._find()
        return self._found

    @overload
    def __getitem__(self, index: int) -> FieldOrigin: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[FieldOrigin, ...]: ...
    def __getitem__(self, index: int | slice) -> FieldOrigin | tuple[FieldOrigin, ...]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[FieldOrigin]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyOrigins):
            return self._key == other._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"LazyOrigins({'unread' if self._found is None else self._found!r})"


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
