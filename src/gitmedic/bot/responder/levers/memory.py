"""Raise a memory limit the working set outgrew: OOMKilled, and nothing in Git explains it.

Evidence: a ``pod-crashloop`` finding with rule ``oom-killed`` (the kernel killed
the container at its limit: the working set reached it). A limit (or request) a
recent commit changed is the memory playbook's to restore, and a recent change to
what the container runs (image, command, args) may be why it needs more
memory, which the regression bisect judges; anything else (an env var, a
label, a replica count) does not explain an OOM kill, so the limit is raised.

The new limit is twice the old one, bounded by the largest node's allocatable
memory (a pod above it never schedules), by the configured ceiling
(:class:`~.evidence.Bounds`) and by the namespace's ResourceQuota on
``limits.memory`` (what the other workloads already hold). The PR body says
which bound applied. No room above the current limit: no lever (escalate).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.bot.responder.levers.evidence import Evidence, set_fields
from gitmedic.bot.responder.playbooks import POD_SPEC_PATH
from gitmedic.bot.responder.workspace import Fix
from gitmedic.detectors.quantity import MI, whole_bytes
from gitmedic.detectors.snapshot import Container, Snapshot, Workload, mapping
from gitmedic.reconciler.manifests.paths import Match, Path

PLAYBOOK = "memory-working-set-grew"
FACTOR = 2
# Fields whose recent change may explain the kills: the limit or request (the memory
# playbook restores it), or what runs (a release may need more memory: the bisect's).
EXPLAINS_MEMORY = ("resources", "image", "command", "args")


@dataclass(frozen=True)
class RaiseMemoryLimit:
    id: str = "raise-memory-limit"
    playbook: str = PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        wl = ev.workload()
        if f.detector != "pod-crashloop" or f.rule != "oom-killed" or wl is None:
            return None
        name = str(f.params.get("container", ""))
        container = next((c for c in wl.containers(init=False) if c.name == name), None)
        limit = whole_bytes(_limits(container).get("memory")) if container else None
        if container is None or not limit:
            return None  # no limit: the node ran out, not the container (not this lever)
        base = container_path(wl, name)
        if any(ev.recent_change(wl.ref, (*base, key)) for key in EXPLAINS_MEMORY):
            return None
        bound, why = memory_bound(ev, wl, container, limit)
        new = min(limit * FACTOR, bound) // MI * MI
        if new <= limit:
            return None
        text = (
            f"{f.summary} ({f.detector}/{f.rule}): the working set reached the limit of "
            f"{_mi(limit)} and no recent commit changed {name}'s resources or what it runs "
            f"(image, command, args), so no commit explains the OOM kill. Lever {self.id}: "
            f"raise {name}'s memory limit {_mi(limit)} -> {_mi(new)} (x{FACTOR}, bounded by "
            f"{why}). Risk medium: it holds more of the node's memory; undone if it does "
            f"not clear the OOM kills."
        )
        path = (*base, "resources", "limits", "memory")
        return set_fields(ev, wl.ref, [(path, f"{new // MI}Mi")], text, self.playbook)


RAISE_MEMORY_LIMIT = RaiseMemoryLimit()


def container_path(wl: Workload, name: str) -> Path:
    spec = POD_SPEC_PATH.get(wl.obj.kind, "spec.template.spec").split(".")
    return (*spec, "containers", Match("name", name))


def memory_bound(ev: Evidence, wl: Workload, container: Container, limit: int) -> tuple[int, str]:
    """The highest limit allowed, and the bound that sets it (for the PR body)."""
    bounds = [(ev.bounds.memory_ceiling, f"the configured ceiling {_mi(ev.bounds.memory_ceiling)}")]
    node = _largest_allocatable(ev.live)
    if node is not None:
        bounds.append((node, f"the largest node's allocatable memory {_mi(node)}"))
    room = _quota_room(ev, wl)
    if room is not None:
        per_pod = room // max(1, wl.replicas or 1)
        bounds.append((limit + per_pod, f"the ResourceQuota's limits.memory ({_mi(room)} free)"))
    lowest, why = min(bounds, key=lambda b: b[0])
    return lowest, why


def _largest_allocatable(live: Snapshot | None) -> int | None:
    if live is None:
        return None
    allocatable = [mapping(n.status.get("allocatable")) for n in live.of_kind("Node")]
    sizes = [whole_bytes(a.get("memory")) for a in allocatable]
    known = [s for s in sizes if s]
    return max(known) if known else None


def _quota_room(ev: Evidence, wl: Workload) -> int | None:
    """``limits.memory`` the namespace's quota leaves free, from the desired state."""
    desired = ev.ws.states.at(ev.ws.head)
    hards = [
        whole_bytes(mapping(q.spec.get("hard")).get("limits.memory"))
        for q in desired.of_kind("ResourceQuota", wl.obj.namespace)
    ]
    known = [h for h in hards if h]
    if not known:
        return None
    used = sum(
        (w.replicas or 1) * sum(whole_bytes(_limits(c).get("memory")) or 0 for c in w.containers())
        for w in desired.workloads(wl.obj.namespace)
    )
    return max(0, min(known) - used)


def _limits(container: Container | None) -> dict[str, object]:
    if container is None:
        return {}
    return dict(mapping(mapping(container.body.get("resources")).get("limits")))


def _mi(size: int) -> str:
    return f"{size // MI}Mi" if size % MI == 0 else f"{size}B"
