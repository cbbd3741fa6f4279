"""The objects a finding's object relates to: where to look when the object itself is unchanged.

A Service that selects nothing was often broken by its workload, not by itself:
the commit relabelled the Deployment's pods and left the Service as it was. So
when the changes a commit made to a finding's own objects do not explain the
finding, bisect looks at the commit's changes to the objects related to it:

- a **Service** relates to the workloads it selects and those it *should* select:
  the ones it selected in another revision (the good one, before the commit), and
  the one its name evidently names (a workload of the same name, or whose pods
  carry the Service's name as a label value);
- a **workload** relates to the ConfigMaps, Secrets, PersistentVolumeClaims and
  ServiceAccount its pod spec references (:mod:`~gitmedic.detectors.builtin._references`),
  and to the Services its containers' env addresses name
  (:mod:`~gitmedic.detectors.topology`).

The walk is one hop and reads every given snapshot (HEAD and the revisions around
the suspect commit), since the relation that matters is often the one the commit
broke: at HEAD the Service selects nothing, before the commit it selected the
workload. Each relation says why it holds, for the diagnosis. Pure: snapshots in,
relations out, in a stable order (nearest first, then by kind and name).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gitmedic.detectors.builtin._references import references
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.detectors.topology import calls


@dataclass(frozen=True)
class Relation:
    ref: Resource
    why: str  # "selected by Service/ns/x before", "referenced by ... (env)"


def related_objects(ref: Resource, snapshots: Sequence[Snapshot]) -> list[Relation]:
    """Objects ``ref`` relates to in any of ``snapshots``, each once, ``ref`` itself left out."""
    seen: dict[Resource, Relation] = {}
    for snapshot in snapshots:
        obj = snapshot.get(ref.kind, ref.namespace, ref.name)
        if obj is None:
            continue
        for relation in _relations(snapshot, obj):
            if relation.ref != ref and relation.ref not in seen:
                seen[relation.ref] = relation
    return list(seen.values())


def _relations(snapshot: Snapshot, obj: Obj) -> Iterator[Relation]:
    if obj.kind == "Service":
        yield from _service_workloads(snapshot, obj)
        return
    workload = next((w for w in snapshot.workloads(obj.namespace) if w.ref == obj.ref), None)
    if workload is not None:
        yield from _referenced(workload)
        yield from _called(snapshot, workload)


def _service_workloads(snapshot: Snapshot, svc: Obj) -> Iterator[Relation]:
    selector = {str(k): str(v) for k, v in mapping(svc.spec.get("selector")).items()}
    if selector:
        rev = snapshot.revision or "this revision"
        for wl in sorted(snapshot.workloads_selected_by(svc.namespace, selector), key=_order):
            yield Relation(wl.ref, f"selected by {svc.ref} at {rev[:12]}")
    for wl in named_workloads(snapshot, svc):
        yield Relation(wl.ref, f"named by {svc.ref}")


def named_workloads(snapshot: Snapshot, svc: Obj) -> list[Workload]:
    """The workloads a Service's name evidently names: one of the same name, else those
    whose pod labels carry the name as a value (``app: cartservice``)."""
    workloads = sorted(snapshot.workloads(svc.namespace), key=_order)
    same = [w for w in workloads if w.obj.name == svc.name]
    if same:
        return same
    return [w for w in workloads if svc.name in {str(v) for v in w.template_labels.values()}]


def _referenced(wl: Workload) -> Iterator[Relation]:
    kinds = {"ConfigMap", "Secret", "PersistentVolumeClaim", "ServiceAccount"}
    for reference in references(wl):
        if reference.kind in kinds:
            ref = Resource(reference.kind, wl.obj.namespace, reference.name)
            yield Relation(ref, f"referenced by {wl.ref} ({reference.via})")


def _called(snapshot: Snapshot, wl: Workload) -> Iterator[Relation]:
    for call in calls(snapshot):
        if call.caller.ref == wl.ref:
            ref = Resource("Service", call.namespace, call.service_name, "v1")
            yield Relation(ref, f"addressed by {wl.ref} (env {call.env})")


def _order(wl: Workload) -> tuple[str, str]:
    return (wl.obj.kind, wl.obj.name)
