"""Where a rendered field's value was written: a values file, its key path and line.

A Helm chart's objects are rendered from templates; the line a person edits to
change ``spec.replicas`` is ``replicaCount: 3`` in a values file, not the
template. The loader records, per rendered object, which fields a values key
feeds; a finding about a field is then located at that values line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gitmedic.detectors.finding import Resource

if TYPE_CHECKING:
    from gitmedic.detectors.snapshot import Obj


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


def finding_origin(obj: Obj | None, params: Mapping[str, Any]) -> FieldOrigin | None:
    """The values line a finding's field comes from, if the object is rendered: the field
    is ``params["path"]``, or a container's resource limit named by its params."""
    if obj is None or obj.source is None or not obj.source.origins:
        return None
    path = finding_path(obj, params)
    return origin_of(obj.source.origins, path) if path else None


def finding_path(obj: Obj, params: Mapping[str, Any]) -> str:
    """The field a finding is about: ``params["path"]``, else the container (its resource
    limit, its image, or the env variable holding a port) its params name; '' when they
    name none."""
    path = params.get("path") or _container_field(obj, params)
    return path if isinstance(path, str) else ""


def _container_field(obj: Obj, params: Mapping[str, Any]) -> str:
    from gitmedic.detectors.snapshot import as_list, pod_spec_of  # snapshot imports this module

    field = str(params.get("container_field") or "containers")
    base = "spec" if obj.kind == "Pod" else "spec.template.spec"
    containers = [c for c in as_list(pod_spec_of(obj).get(field)) if isinstance(c, dict)]
    names = [c.get("name") for c in containers]
    if params.get("container") not in names:
        return ""
    index = names.index(params.get("container"))
    at = f"{base}.{field}[{index}]"
    if "limit" in params:
        return f"{at}.resources.limits.{params.get('resource', 'memory')}"
    if isinstance(params.get("image"), str):  # an image that does not pull
        return f"{at}.image"
    env = _env_index(as_list(containers[index].get("env")), params.get("port_var"))
    return f"{at}.env[{env}].value" if env is not None else at


def _env_index(env: list[Any], name: Any) -> int | None:
    """The entry of ``env`` that sets ``name`` (the last one: a later duplicate wins)."""
    names = [e.get("name") if isinstance(e, dict) else None for e in env]
    if not name or name not in names:
        return None
    return len(names) - 1 - names[::-1].index(name)
