"""Containers whose image cannot be pulled: ErrImagePull, ImagePullBackOff, InvalidImageName.

kubelet alternates between ErrImagePull and ImagePullBackOff for the same
cause, so both map to one rule (``image-pull``) and the alternating reason
stays out of the params (the fingerprint must not flap with it).
InvalidImageName is its own rule: the reference itself is malformed and will
never pull. The message of the latest ``Failed`` event (registry answer: not
found, unauthorized) goes into the evidence.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import (
    ContainerState,
    Group,
    event_message,
    grouped,
    latest_event,
)
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="pod-image-pull",
    description="A container's image cannot be pulled (ImagePullBackOff, ErrImagePull, "
    "InvalidImageName).",
    kinds=frozenset({"Pod", "Event", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    severity=Severity.CRITICAL,
    remediation="Restore the image reference (repository and tag) of the last working revision, "
    "or add the imagePullSecret the registry needs.",
    scope=Scope.LIVE,
    certain_because=("read from the pod's live status (ErrImagePull, InvalidImageName)"),
    # the image that last ran healthy, a runtime lever (bot/responder/levers) after bad-image
    playbooks=("bad-image", "image-ran-healthy"),
)
_RULES = {
    "ImagePullBackOff": "image-pull",
    "ErrImagePull": "image-pull",
    "InvalidImageName": "invalid-image-name",
}


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for group in grouped(snapshot, _rule, init=None):
        yield _finding(snapshot, group)


def _rule(state: ContainerState) -> str | None:
    return _RULES.get(str(state.waiting.get("reason", "")))


def _finding(snapshot: Snapshot, group: Group) -> Finding:
    first = group.first
    images = sorted({str(s.status.get("image") or s.spec.get("image") or "") for s in group.states})
    reasons = sorted({str(s.waiting.get("reason")) for s in group.states})
    event = latest_event(snapshot, first.pod, ("Failed",))
    message = event_message(event) or str(first.waiting.get("message", ""))
    kind = "init container" if first.init else "container"
    return SPEC.finding(
        group.workload,
        f"{kind} {group.container} cannot pull image {', '.join(images)}",
        rule=group.rule,
        evidence=f"pods {', '.join(s.pod.name for s in group.states)}: {'/'.join(reasons)}"
        + (f"; {message.strip()[:300]}" if message else ""),
        related=group.pods,
        params={
            "container": group.container,
            "container_field": "initContainers" if first.init else "containers",
            "image": images[0] if len(images) == 1 else images,
        },
    )
