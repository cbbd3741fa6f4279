"""Faults with no history: a value from the evidence when it determines one, else choices.

A fault present since the app's first commit has no good revision to restore from.
Some findings still say what the value must be:

- a Service ``targetPort`` no selected container declares: the port the selected
  containers serve (:func:`_target_port`);
- a probe on a port its container does not declare: the port the container declares
  (:func:`_probe_port`);
- a Service selector that matches no pods: the labels of the workload the Service
  evidently names (:func:`~.related.named_workloads`; else the workloads sharing the
  most selector labels), for the selector's keys (:func:`_selector`).

Each candidate value is tried in the re-parsed desired state, and only those that
clear the finding without a new one count. One left: the evidence determines it,
and the fix is a restore like any other. Several: the first (the likeliest, by
the order each reader gives) is proposed, and the others are the fix's
``alternatives``: the policy then holds the PR for a person (a safe default no
rule lowers) and its diagnosis lists them. None: no fix here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.responder.playbooks import BoundFix
from gitmedic.bot.responder.related import named_workloads
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.reconciler.manifests.documents import EditError, blob_sha
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import Path, format_path, lookup, parse_path


@dataclass(frozen=True)
class Candidate:
    value: Any
    why: str  # where the evidence found it


Reader = Callable[[Snapshot, Obj, Finding], tuple[Path, list[Candidate]]]


def evidence_fix(ws: Workspace, finding: Finding, bound: BoundFix) -> Fix | None:
    """A fix setting the field the evidence determines (module doc), or None."""
    reader = READERS.get(finding.detector)
    head = ws.states.at(ws.head)
    obj = head.get(bound.target.kind, bound.target.namespace, bound.target.name)
    file = ws.file_of(bound.target)
    if reader is None or obj is None or file is None:
        return None
    path, candidates = reader(head, obj, finding)
    working = [
        (c, edit) for c in candidates if (edit := _clearing(ws, finding, file, obj, path, c))
    ]
    if not working:
        return None
    (chosen, edit), others = working[0], [c for c, _ in working[1:]]
    contents = ws.applied([edit], {})
    return Fix(
        "playbook",
        (edit,),
        contents,
        _diagnosis(finding, bound, path, chosen, others),
        bound.playbook,
        alternatives=tuple(f"{_shown(c.value)} ({c.why})" for c in others),
    )


def _clearing(
    ws: Workspace, finding: Finding, file: str, obj: Obj, path: Path, candidate: Candidate
) -> Edit | None:
    found, current = lookup(obj.body, path)
    if found and current == candidate.value:
        return None
    edit = Edit(Op.SET if found else Op.INSERT, file, obj.ref, path, candidate.value)
    edit = edit.with_base(blob_sha(ws.content(file).encode("utf-8")))
    try:
        contents = ws.applied([edit], {})
    except EditError:
        return None
    return edit if ws.check(finding, contents) else None


def _diagnosis(
    finding: Finding, bound: BoundFix, path: Path, chosen: Candidate, others: list[Candidate]
) -> str:
    field = f"{format_path(path)} of {bound.target}"
    text = (
        f"{finding.summary} ({finding.detector}). Git history holds no good value (the fault "
        f"is there since the app's first commit or beyond the commits walked); "
    )
    if not others:
        return (
            text + f"the evidence determines one: {field} = {_shown(chosen.value)} ({chosen.why})."
        )
    listed = "; ".join(f"{_shown(c.value)} ({c.why})" for c in others)
    return text + (
        f"the evidence leaves {len(others) + 1} values that each clear it. Proposed: {field} = "
        f"{_shown(chosen.value)} ({chosen.why}). Alternatives: {listed}. A person chooses: "
        "approve this one, or edit the branch to an alternative."
    )


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)


# -- the readers: which field, which values ----------------------------------------------


def _target_port(snapshot: Snapshot, svc: Obj, finding: Finding) -> tuple[Path, list[Candidate]]:
    index = int(finding.params.get("port_index", 0))
    port = mapping(as_list(svc.spec.get("ports"))[index]) if as_list(svc.spec.get("ports")) else {}
    selector = {str(k): str(v) for k, v in mapping(svc.spec.get("selector")).items()}
    served = [
        (p, c.name)
        for w in snapshot.workloads_selected_by(svc.namespace, selector)
        for c in w.containers(init=False)
        for p in c.ports
        if isinstance(p.get("containerPort"), int)
    ]
    ranked = sorted(served, key=lambda pc: _port_rank(port, pc[0]))
    return parse_path(f"spec.ports[{index}].targetPort"), _unique(
        Candidate(p["containerPort"], f"served by container {name}") for p, name in ranked
    )


def _port_rank(service_port: Mapping[str, Any], container_port: Mapping[str, Any]) -> int:
    """Likeliest first: the container port of the Service port's name, then of its number."""
    name = service_port.get("name")
    if name and container_port.get("name") == name:
        return 0
    return 1 if container_port.get("containerPort") == service_port.get("port") else 2


def _probe_port(snapshot: Snapshot, obj: Obj, finding: Finding) -> tuple[Path, list[Candidate]]:
    """The probe's port set to a port its container declares (by name, if the probe used
    one and the port has one)."""
    container = str(finding.params.get("container", ""))
    workload = next((w for w in snapshot.workloads(obj.namespace) if w.ref == obj.ref), None)
    containers = workload.containers() if workload is not None else []
    ports = next((c.ports for c in containers if c.name == container), [])
    named = isinstance(finding.params.get("port"), str)
    why = f"declared by container {container}"
    candidates = (
        Candidate(q["name"] if named and q.get("name") else q["containerPort"], why)
        for q in ports
        if isinstance(q.get("containerPort"), int)
    )
    return parse_path(str(finding.params.get("path", ""))), _unique(candidates)


def _selector(snapshot: Snapshot, svc: Obj, finding: Finding) -> tuple[Path, list[Candidate]]:
    selector = {str(k): str(v) for k, v in mapping(svc.spec.get("selector")).items()}
    named = named_workloads(snapshot, svc)
    workloads = named or _closest(snapshot, svc, selector)
    how = "named by the Service" if named else "sharing the most selector labels"
    return parse_path("spec.selector"), _unique(
        Candidate(_labels_for(selector, w), f"pod labels of {w.ref}, {how}") for w in workloads
    )


def _closest(snapshot: Snapshot, svc: Obj, selector: Mapping[str, str]) -> list[Workload]:
    def shared(w: Workload) -> int:
        return sum(w.template_labels.get(k) == v for k, v in selector.items())

    workloads = snapshot.workloads(svc.namespace)
    best = max((shared(w) for w in workloads), default=0)
    return [w for w in workloads if best and shared(w) == best]


def _labels_for(selector: Mapping[str, str], wl: Workload) -> dict[str, str]:
    """The workload's pod labels for the selector's keys, when it has them all; else the
    labels that identify its pods (its own selector, or all of its pod labels)."""
    labels = {str(k): str(v) for k, v in wl.template_labels.items()}
    if selector and all(k in labels for k in selector):
        return {k: labels[k] for k in selector}
    own = mapping(mapping(wl.obj.spec.get("selector")).get("matchLabels"))
    return {str(k): str(v) for k, v in own.items()} or labels


def _unique(candidates: Iterator[Candidate]) -> list[Candidate]:
    out: list[Candidate] = []
    for c in candidates:
        if all(c.value != o.value for o in out):
            out.append(c)
    return out


READERS: Mapping[str, Reader] = {
    "service-target-port": _target_port,
    "probe-port": _probe_port,
    "service-selector-unmatched": _selector,
}
