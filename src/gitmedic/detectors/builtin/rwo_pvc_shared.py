"""A single-node volume claimed by several pods: all but one stay Pending or fail to attach.

A PersistentVolumeClaim whose ``accessModes`` are only ``ReadWriteOnce`` attaches
to one node at a time; ``ReadWriteOncePod`` admits one pod in the whole cluster.
A claim listing ``ReadWriteMany`` or ``ReadOnlyMany`` is shareable and never
judged, nor is a claim the snapshot does not hold (its modes are unknown).
StatefulSet ``volumeClaimTemplates`` give each pod a claim of its own and are
not judged either. Rules:

- ``replicas-share-claim``: a workload with more than one replica mounts such a
  claim. Critical for ReadWriteOncePod, and for ReadWriteOnce when a required
  pod anti-affinity on ``kubernetes.io/hostname`` forces the replicas onto
  different nodes (the catalogue's fault); a warning otherwise, since replicas
  work only while the scheduler happens to co-locate them. Silent for
  ReadWriteOnce when the snapshot knows the nodes and only one can run the pods.
- ``claim-shared-by-workloads``: two or more workloads mount the same claim.
  Critical for ReadWriteOncePod, a warning for ReadWriteOnce.

Claims are indexed once by (namespace, name); each workload is visited once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.builtin._affinity import self_exclusive_terms
from gitmedic.detectors.builtin._fields import pod_spec_path
from gitmedic.detectors.builtin._nodes import HOSTNAME, eligible_nodes
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, as_list, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="rwo-pvc-shared",
    description=(
        "A ReadWriteOnce or ReadWriteOncePod volume claim is mounted by several replicas "
        "or several workloads."
    ),
    kinds=frozenset(
        {
            "PersistentVolumeClaim",
            "Deployment",
            "StatefulSet",
            "ReplicaSet",
            "Job",
            "CronJob",
            "Pod",
            "Node",
        }
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore replicas (or the anti-affinity) to their last good values so one pod owns the "
        "claim; give each replica its own claim (a StatefulSet volumeClaimTemplate), or use a "
        "ReadWriteMany storage class."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "critical only for a ReadWriteOncePod claim, or ReadWriteOnce with required anti-"
        "affinity spreading the replicas over nodes: the claim cannot attach to them all"
    ),
    playbooks=("rwo-pvc-shared",),
)

SINGLE_NODE = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


@dataclass(frozen=True)
class Mount:
    workload: Workload
    claim: Obj
    modes: tuple[str, ...]
    path: str

    @property
    def one_pod(self) -> bool:
        return "ReadWriteOncePod" in self.modes


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    by_claim: dict[tuple[str, str], list[Mount]] = defaultdict(list)
    for wl in snapshot.workloads():
        for mount in mounts(snapshot, wl):
            by_claim[(mount.claim.namespace, mount.claim.name)].append(mount)
            yield from _replicas(snapshot, mount)
    for key in sorted(by_claim):
        yield from _shared(by_claim[key])


def access_modes(claim: Obj) -> tuple[str, ...]:
    modes = as_list(claim.spec.get("accessModes")) or as_list(claim.status.get("accessModes"))
    return tuple(str(m) for m in modes)


def mounts(snapshot: Snapshot, wl: Workload) -> Iterator[Mount]:
    """The workload's volumes on single-node claims held by the snapshot."""
    base = pod_spec_path(wl.obj.kind)
    for index, volume in enumerate(as_list(wl.pod_spec.get("volumes"))):
        name = mapping(mapping(volume).get("persistentVolumeClaim")).get("claimName")
        claim = snapshot.get("PersistentVolumeClaim", wl.obj.namespace, str(name)) if name else None
        if claim is None:
            continue
        modes = access_modes(claim)
        if modes and set(modes) <= SINGLE_NODE:
            path = f"{base}.volumes[{index}].persistentVolumeClaim.claimName"
            yield Mount(wl, claim, modes, path)


def _replicas(snapshot: Snapshot, mount: Mount) -> Iterator[Finding]:
    wl = mount.workload
    if wl.replicas is None or wl.replicas < 2:
        return
    nodes = eligible_nodes(snapshot, wl.pod_spec)
    spread = any(key == HOSTNAME for _, key in self_exclusive_terms(wl))
    if not mount.one_pod and nodes is not None and len(nodes) < 2 and not spread:
        return
    critical = mount.one_pod or spread
    yield SPEC.finding(
        wl.ref,
        f"{wl.ref.name}: {wl.replicas} replicas share claim {mount.claim.name} "
        f"({'/'.join(mount.modes)})",
        rule="replicas-share-claim",
        severity=Severity.CRITICAL if critical else Severity.WARNING,
        evidence=(
            f"replicas={wl.replicas}; {mount.path}={mount.claim.name}; accessModes "
            f"{list(mount.modes)}"
            + ("; required anti-affinity spreads them over nodes" if spread else "")
        ),
        related=[mount.claim.ref],
        params={
            "claim": mount.claim.name,
            "access_modes": list(mount.modes),
            "path": "spec.replicas",
            "value": wl.replicas,
            "claim_path": mount.path,
            "suggested": 1,
        },
    )


def _shared(group: list[Mount]) -> Iterator[Finding]:
    owners = sorted({m.workload.ref for m in group})
    if len(owners) < 2:
        return
    for mount in group:
        others = [o for o in owners if o != mount.workload.ref]
        yield SPEC.finding(
            mount.workload.ref,
            f"{mount.workload.ref.name}: claim {mount.claim.name} ({'/'.join(mount.modes)}) "
            f"is also mounted by {', '.join(str(o) for o in others)}",
            rule="claim-shared-by-workloads",
            severity=Severity.CRITICAL if mount.one_pod else Severity.WARNING,
            evidence=f"{mount.path}={mount.claim.name}; accessModes {list(mount.modes)}",
            related=[mount.claim.ref, *others],
            params={
                "claim": mount.claim.name,
                "access_modes": list(mount.modes),
                "path": mount.path,
                "value": mount.claim.name,
            },
        )
