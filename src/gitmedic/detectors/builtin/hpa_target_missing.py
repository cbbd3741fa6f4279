"""A HorizontalPodAutoscaler whose scaleTargetRef names no workload.

The HPA then does nothing (``ScalingActive=False``, FailedGetScale) and the
workload it was meant to scale, if it exists under another name, is never
scaled. Only targets of a kind we can see are judged: a built-in workload kind
or a kind with at least one object in the snapshot (a custom resource such as an
Argo Rollout whose kind is absent altogether cannot be judged).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from gitmedic.detectors.builtin._hpa import target_ref
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.kinds import CUSTOM_WORKLOAD_KINDS
from gitmedic.detectors.snapshot import WORKLOAD_KINDS, Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="hpa-target-missing",
    description="A HorizontalPodAutoscaler's scaleTargetRef names a workload that does not exist.",
    kinds=frozenset({"HorizontalPodAutoscaler", "Deployment", "StatefulSet", "ReplicaSet"}),
    severity=Severity.WARNING,
    remediation="Point scaleTargetRef at the workload's current kind and name (or delete the HPA).",
    scope=Scope.BOTH,
    certain_because=("never critical (a warning)"),
    playbooks=("hpa-target-missing",),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for hpa in snapshot.of_kind("HorizontalPodAutoscaler"):
        target = target_ref(hpa)
        if target is None or snapshot.has(target.kind, target.namespace, target.name):
            continue
        builtin = target.kind in WORKLOAD_KINDS and target.kind not in CUSTOM_WORKLOAD_KINDS
        if not builtin and not snapshot.of_kind(target.kind):
            continue
        candidates = sorted(
            {w.ref.name for w in snapshot.workloads(hpa.namespace) if w.ref.kind == target.kind}
        )
        close = difflib.get_close_matches(target.name, candidates, n=1)
        evidence = f"no {target.kind} {target.name} in namespace {hpa.namespace}"
        if close:
            evidence += f"; did you mean {target.kind} {close[0]}?"
        yield SPEC.finding(
            hpa.ref,
            f"HPA {hpa.name} scales {target.kind} {target.name}, which does not exist",
            evidence=evidence,
            params={"target": target.to_json(), "closest": close[0] if close else None},
        )
