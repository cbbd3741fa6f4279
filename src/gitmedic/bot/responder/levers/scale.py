"""Scale out a workload whose every replica is busy, when nothing in Git explains the load.

Evidence: a ``workload-saturated`` finding (every Ready pod at its CPU limit, by
the metrics API). A recent change to the workload's replicas, to the busy
container's resources or to what it runs (image, command, args), or to the
HPA that owns its replicas, may be the cause: the restores and the bisect
judge those, so the lever declines. An HPA that owns the replicas and is not
at its ``maxReplicas`` yet scales by itself: no lever either.

The edit doubles ``spec.replicas``, or, when an HPA owns the replicas, its
``spec.maxReplicas`` (setting replicas under an HPA is overwritten at once).
Bounded by the configured ceiling (:attr:`~.evidence.Bounds.max_replicas`) and
by the CPU the nodes have left for the new pods' requests (a pod that does not
fit stays Pending); the PR body says which bound applied. No room above what
runs: no lever (escalate).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.bot.responder.levers.evidence import Evidence, set_fields
from gitmedic.bot.responder.levers.memory import container_path
from gitmedic.bot.responder.workspace import Fix
from gitmedic.detectors.builtin._hpa import target_ref
from gitmedic.detectors.builtin.workload_saturated import hpa_replicas
from gitmedic.detectors.quantity import millicores
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.reconciler.manifests.paths import Path

PLAYBOOK = "workload-saturated"
FACTOR = 2
SCALED = frozenset({"Deployment", "StatefulSet"})
# What a recent change to may explain the load: how much CPU a pod has, or what it runs.
EXPLAINS_LOAD = ("resources", "image", "command", "args")
HPA_FIELDS = (("spec", "maxReplicas"), ("spec", "minReplicas"), ("spec", "metrics"))


@dataclass(frozen=True)
class ScaleOut:
    id: str = "scale-out"
    playbook: str = PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        wl = ev.workload() if f.resource.kind in SCALED else None
        if f.detector != "workload-saturated" or wl is None:
            return None
        hpa = owning_hpa(ev.ws.states.at(ev.ws.head), wl)
        if self._recently_changed(ev, wl, hpa, str(f.params.get("container", ""))):
            return None
        if hpa is not None:
            return self._raise_max(ev, wl, hpa)
        current = wl.replicas if wl.replicas is not None else 1
        new, why = replica_bound(ev, wl, current)
        if new <= current:
            return None
        what = f"spec.replicas of {wl.ref} {current} -> {new}"
        text = self._text(f.summary, f.evidence, what, why)
        return set_fields(ev, wl.ref, [(("spec", "replicas"), new)], text, self.playbook)

    def _raise_max(self, ev: Evidence, wl: Workload, hpa: Obj) -> Fix | None:
        high = hpa.spec.get("maxReplicas")
        live = ev.live.get(hpa.kind, hpa.namespace, hpa.name) if ev.live is not None else None
        if not isinstance(high, int) or live is None or hpa_replicas(live) < high:
            return None  # below its maximum the HPA adds replicas by itself
        new, why = replica_bound(ev, wl, high)
        if new <= high:
            return None
        what = f"spec.maxReplicas of {hpa.ref}, which owns {wl.ref}'s replicas, {high} -> {new}"
        text = self._text(ev.finding.summary, ev.finding.evidence, what, why)
        return set_fields(ev, hpa.ref, [(("spec", "maxReplicas"), new)], text, self.playbook)

    def _recently_changed(self, ev: Evidence, wl: Workload, hpa: Obj | None, name: str) -> bool:
        paths: list[Path] = [("spec", "replicas")]
        if name:
            paths += [(*container_path(wl, name), key) for key in EXPLAINS_LOAD]
        if any(ev.recent_change(wl.ref, p) for p in paths):
            return True
        return hpa is not None and any(ev.recent_change(hpa.ref, p) for p in HPA_FIELDS)

    def _text(self, summary: str, evidence: str, what: str, why: str) -> str:
        return (
            f"{summary} (workload-saturated: {evidence}). No recent commit changed its "
            f"replicas, its resources, what it runs or its HPA, so no commit explains the "
            f"load. Lever {self.id}: {what} ({why}). Risk medium: "
            f"more pods hold more of the cluster's CPU and memory; undone if the new "
            f"replicas do not clear the saturation."
        )


SCALE_OUT = ScaleOut()


def owning_hpa(desired: Snapshot, wl: Workload) -> Obj | None:
    """The HorizontalPodAutoscaler of the desired state that scales ``wl``, if any."""
    for hpa in desired.of_kind("HorizontalPodAutoscaler", wl.obj.namespace):
        ref = target_ref(hpa)
        if ref is not None and (ref.kind, ref.name) == (wl.obj.kind, wl.obj.name):
            return hpa
    return None


def replica_bound(ev: Evidence, wl: Workload, current: int) -> tuple[int, str]:
    """The replica count to go to (x2 at most) and which bound set it (for the PR body)."""
    ceiling = ev.bounds.max_replicas
    doubled = current * FACTOR
    bounds = [(ceiling, f"bounded by the configured ceiling of {ceiling} replicas")]
    room = _cpu_room(ev.live, wl)
    if room is not None:
        fits, free = room
        bounds.append((current + fits, f"bounded by the CPU the nodes have left ({free}m)"))
    lowest, why = min(bounds, key=lambda b: b[0])
    if doubled <= lowest:
        return doubled, f"x{FACTOR}, within the configured ceiling of {ceiling} replicas"
    return lowest, why


def _cpu_room(live: Snapshot | None, wl: Workload) -> tuple[int, int] | None:
    """How many more of the workload's pods the nodes' unrequested CPU holds, and that CPU."""
    per_pod = sum(_request_m(c.body) for c in wl.containers(init=False))
    if live is None or per_pod <= 0:
        return None
    nodes = live.of_kind("Node")
    allocatable = [millicores(mapping(n.status.get("allocatable")).get("cpu")) for n in nodes]
    if not nodes or any(a is None for a in allocatable):
        return None
    running = [p for p in live.of_kind("Pod") if p.status.get("phase") in ("Running", "Pending")]
    requested = sum(
        _request_m(mapping(c)) for p in running for c in as_list(p.spec.get("containers"))
    )
    free = max(0, sum(a or 0 for a in allocatable) - requested)
    return free // per_pod, free


def _request_m(container: object) -> int:
    resources = mapping(mapping(container).get("resources"))
    cpu = mapping(resources.get("requests")).get("cpu") or mapping(resources.get("limits")).get(
        "cpu"
    )
    return millicores(cpu) or 0
