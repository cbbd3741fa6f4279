"""A ResourceQuota that refuses a workload's pods: they lack a request or limit it counts.

When a quota sets a hard limit on ``requests.memory`` (or ``memory``),
``limits.memory``, ``requests.cpu`` (or ``cpu``) or ``limits.cpu``, the API
server refuses every pod in the namespace whose containers (init containers
included) do not specify that request or limit: "must specify limits.memory".
The controller then reports FailedCreate and the workload gets no pods. A
request counts as specified when the container's limit or a LimitRange default
supplies it (see ``_resources``). Quotas with ``scopes`` or a ``scopeSelector``
apply to a subset of pods we cannot always decide statically and are not
judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._resources import effective_limit, effective_request
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Container, Obj, Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="resource-quota-blocks",
    description="A ResourceQuota limits requests/limits of cpu or memory while a workload's "
    "containers do not set them (pods are refused: FailedCreate).",
    kinds=frozenset(
        {
            "ResourceQuota",
            "LimitRange",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "ReplicaSet",
            "Job",
            "CronJob",
            "Pod",
        }
    ),
    severity=Severity.CRITICAL,
    remediation="Restore the containers' resources (requests and limits) of the last working "
    "revision, or add a LimitRange with defaults.",
    scope=Scope.BOTH,
    certain_because=(
        "the API server refuses every pod lacking what the quota counts; scoped quotas are not "
        "judged"
    ),
    playbooks=("resource-quota-blocks",),
)
# quota key -> (section, resource name) a container must specify
_FIELDS = {
    "requests.memory": ("requests", "memory"),
    "memory": ("requests", "memory"),
    "limits.memory": ("limits", "memory"),
    "requests.cpu": ("requests", "cpu"),
    "cpu": ("requests", "cpu"),
    "limits.cpu": ("limits", "cpu"),
}


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for quota in snapshot.of_kind("ResourceQuota"):
        if quota.spec.get("scopes") or quota.spec.get("scopeSelector"):
            continue
        fields = sorted({_FIELDS[k] for k in mapping(quota.spec.get("hard")) if k in _FIELDS})
        if not fields:
            continue
        for wl in snapshot.workloads(quota.namespace):
            missing = _missing(snapshot, wl, fields)
            if missing:
                yield _finding(quota, wl, missing)


def _missing(
    snapshot: Snapshot, wl: Workload, fields: list[tuple[str, str]]
) -> dict[str, list[Container]]:
    """``section.name`` -> containers that do not specify it."""
    out: dict[str, list[Container]] = {}
    for section, name in fields:
        check = effective_request if section == "requests" else effective_limit
        lacking = [c for c in wl.containers() if not check(snapshot, wl.obj.namespace, c, name)]
        if lacking:
            out[f"{section}.{name}"] = lacking
    return out


def _finding(quota: Obj, wl: Workload, lacking: dict[str, list[Container]]) -> Finding:
    missing = {field: [c.name for c in cs] for field, cs in lacking.items()}
    # The first container lacking a field, so a fix can restore its resources.
    first = next(iter(lacking.values()))[0]
    detail = "; ".join(f"{field}: {', '.join(cs)}" for field, cs in missing.items())
    hard = ", ".join(sorted(mapping(quota.spec.get("hard"))))
    return SPEC.finding(
        wl.ref,
        f"ResourceQuota {quota.name} refuses the pods of {wl.ref.kind} {wl.ref.name}: "
        f"containers do not specify {', '.join(missing)}",
        evidence=f"quota {quota.name} sets hard {hard}; missing {detail}",
        related=[quota.ref],
        params={
            "quota": quota.name,
            "missing": missing,
            "container": first.name,
            "container_field": first.list_field,
        },
    )
