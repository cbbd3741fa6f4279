"""The field a finding is about, and the values line it was rendered from.

A finding's params name its field (``params["path"]``) or the container, limit,
image or env entry at fault; this reads them against the object. It sits above
:mod:`.snapshot` (it reads objects), which sits above :mod:`.origin` (objects
carry their fields' origins).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.origin import FieldOrigin, origin_of
from gitmedic.detectors.snapshot import Obj, as_list, pod_spec_of


def finding_origin(obj: Obj | None, params: Mapping[str, Any]) -> FieldOrigin | None:
    """The values line a finding's field comes from, if the object is rendered: the field
    is ``params["path"]``, or a container's resource limit named by its params."""
    if obj is None or obj.source is None:
        return None
    path = finding_path(obj, params)  # first: reading a chart's origins renders it again
    return origin_of(obj.source.origins, path) if path and obj.source.origins else None


def finding_path(obj: Obj, params: Mapping[str, Any]) -> str:
    """The field a finding is about: ``params["path"]``, else the container (its resource
    limit, its image, or the env variable holding a port) its params name; '' when they
    name none."""
    path = params.get("path") or _container_field(obj, params)
    return path if isinstance(path, str) else ""


def _container_field(obj: Obj, params: Mapping[str, Any]) -> str:
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
