"""Containers that cannot be created: CreateContainerConfigError / CreateContainerError.

The usual cause is configuration the pod references but the namespace lacks.
kubelet's message names it, and the detector parses the three shapes it uses::

    configmap "cart-config" not found
    secret "db-credentials" not found
    couldn't find key REDIS_ADDR in ConfigMap shop/cart-config

into ``params.missing`` ({kind, name, key?}) so a playbook can restore exactly
that object or key. Such a finding takes the rule missing-reference uses for the
same cause (``configmap-missing``, ``configmap-key-missing``, ``secret-missing``,
``secret-key-missing``), names the missing object in ``related`` and, for a key,
where it lives (``params.data_path``), so playbooks route and bind on either
detector alike. Other messages (CreateContainerError from the runtime) keep the
rules ``config-error`` / ``create-error``, with the message as evidence and no
``missing``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gitmedic.detectors.builtin._fields import key_path
from gitmedic.detectors.builtin._pods import ContainerState, Group, grouped
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="pod-config-error",
    description="A container cannot be created (CreateContainerConfigError, "
    "CreateContainerError), e.g. a ConfigMap, Secret or key it references is missing.",
    kinds=frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    severity=Severity.CRITICAL,
    remediation="Restore the missing ConfigMap, Secret or key (or the reference to it) from the "
    "last working revision.",
    scope=Scope.LIVE,
    certain_because=("read from the pod's live status (CreateContainerConfigError)"),
    playbooks=("pod-config-error", "configmap-key-dropped"),
)
_REASONS = {"CreateContainerConfigError": "config-error", "CreateContainerError": "create-error"}
_NOT_FOUND = re.compile(r'\b(?P<kind>configmap|secret) "(?P<name>[^"]+)" not found', re.I)
_NO_KEY = re.compile(
    r"couldn't find key (?P<key>\S+) in (?P<kind>ConfigMap|Secret) "
    r"(?:(?P<ns>[^/\s]+)/)?(?P<name>\S+)"
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for group in grouped(snapshot, _rule, init=None):
        yield _finding(group)


def _rule(state: ContainerState) -> str | None:
    return _REASONS.get(str(state.waiting.get("reason", "")))


def missing_reference(message: str) -> dict[str, str] | None:
    """What a kubelet config-error message says is missing, or None."""
    if m := _NO_KEY.search(message):
        return {"kind": m["kind"], "name": m["name"], "key": m["key"]}
    if m := _NOT_FOUND.search(message):
        return {
            "kind": "ConfigMap" if m["kind"].lower() == "configmap" else "Secret",
            "name": m["name"],
        }
    return None


def _finding(group: Group) -> Finding:
    first = group.first
    message = str(first.waiting.get("message", "")).strip()
    missing = missing_reference(message)
    reason = str(first.waiting.get("reason"))
    params: dict[str, object] = {
        "container": group.container,
        "container_field": "initContainers" if first.init else "containers",
        "reason": reason,
    }
    summary = f"container {group.container} cannot be created ({reason})"
    rule, related = group.rule, list(group.pods)
    if missing:
        params["missing"] = missing
        what = f"{missing['kind']} {missing['name']}"
        summary += f": {'key ' + missing['key'] + ' of ' if 'key' in missing else ''}{what} missing"
        rule = f"{missing['kind'].lower()}-{'key-missing' if 'key' in missing else 'missing'}"
        related.append(Resource(missing["kind"], group.workload.namespace, missing["name"]))
        if "key" in missing:
            params["data_path"] = key_path("data", missing["key"])
    return SPEC.finding(
        group.workload,
        summary,
        rule=rule,
        evidence=f"pods {', '.join(s.pod.name for s in group.states)}: {message[:300]}",
        related=related,
        params=params,
    )
