"""Where a finding is: the file and line of the field it is about, for every output format.

A finding names an object and, in its params, the field at fault (``params["path"]``,
or the container, port or env entry they name: :func:`~.finding_field.finding_path`). Its
location is, in order:

1. a rendered field's origin: the values line (Helm) or patch line (kustomize) that
   sets it (:mod:`gitmedic.detectors.origin`);
2. the field's own line in the plain YAML file the object was read from
   (``Source.fields``);
3. the object's first line, when no field is named or the object has none of it.

Params that name a field without a path are read here too (a Service's ``selector``,
a port's index), for locations only: the responder's notion of the field it edits
(:func:`~.finding_field.finding_path`) is left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmedic.detectors.finding import Finding
from gitmedic.detectors.finding_field import finding_path
from gitmedic.detectors.origin import origin_of

if TYPE_CHECKING:
    from gitmedic.detectors.snapshot import Obj, Snapshot


@dataclass(frozen=True)
class Location:
    file: str
    line: int  # 1-based; 0 when only the file is known
    field: str = ""  # the field located, '' for the object itself

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


def finding_location(snapshot: Snapshot, finding: Finding) -> Location | None:
    """The file and line of the field ``finding`` is about; None for an object read from
    no file (a live cluster)."""
    r = finding.resource
    obj = snapshot.get(r.kind, r.namespace, r.name)
    if obj is None or obj.source is None:
        return None
    src = obj.source
    path = located_path(obj, finding.params)
    if path and src.origins:
        origin = origin_of(src.origins, path)
        if origin is not None:
            return Location(origin.file, origin.line, path)
    line = src.fields.line_of(path) if path and src.fields is not None else None
    if line:
        return Location(src.file, line, path)
    return Location(src.file, src.line)


def located_path(obj: Obj, params: Mapping[str, Any]) -> str:
    """The field a finding is about, as precisely as its params say."""
    return finding_path(obj, params) or _named_field(obj, params)


def _named_field(obj: Obj, params: Mapping[str, Any]) -> str:
    index = params.get("port_index")
    if obj.kind == "Service" and isinstance(index, int) and not isinstance(index, bool):
        return f"spec.ports[{index}].targetPort"
    if obj.kind == "Service" and "selector" in params:
        return "spec.selector"
    if obj.kind == "HorizontalPodAutoscaler" and "target" in params:
        return "spec.scaleTargetRef"
    return ""
