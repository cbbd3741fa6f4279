"""A rolling update allowed to take every pod down at once: an outage on every rollout.

The rule: a workload's ``rollingUpdate.maxUnavailable``, resolved the way the
controller resolves it (a percentage of the replicas, rounded down), is at least
the number of replicas. Then the controller may stop every old pod before any
new one is Ready, so each rollout (an image bump, a config change) is an outage.

- Deployment (``spec.strategy``) and StatefulSet (``spec.updateStrategy``) with
  fixed replicas >= 1. Severity is critical when ``maxSurge`` also resolves to 0
  (the catalogue's fault: old pods go first and nothing was started ahead), a
  warning when surge pods are started alongside (the outage lasts until they
  are Ready).
- DaemonSet: ``maxUnavailable`` of 100% or more; or, when the snapshot knows the
  nodes, an absolute value >= the nodes the DaemonSet can run on.
- Only an explicit ``maxUnavailable`` is judged; the defaults (25%, or 1) never
  take all pods of a workload with one or more replicas.

Decided against: ``strategy: Recreate``. It has the same downtime, but it is an
explicit, documented choice for apps that must not run two versions at once
(databases on a ReadWriteOnce volume, as in hotel-reservation's MongoDBs), so
flagging it would be noise on correct apps.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from gitmedic.detectors.builtin._nodes import eligible_nodes
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="rollout-strategy-unsafe",
    description=(
        "A rolling update may stop every pod at once (maxUnavailable >= replicas), "
        "so every rollout is an outage."
    ),
    kinds=frozenset({"Deployment", "StatefulSet", "DaemonSet", "Node"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore rollingUpdate.maxUnavailable to its last good value (Kubernetes' default "
        "is 25%) so that some pods stay up while new ones start; keep maxSurge above 0."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "critical only when maxUnavailable covers every replica and maxSurge is 0: the "
        "controller may stop every pod before a new one is Ready"
    ),
    playbooks=("rollout-strategy-unsafe",),
)

_STRATEGY_FIELD = {"Deployment": "strategy", "StatefulSet": "updateStrategy"}
_SUGGESTED = {"Deployment": "25%", "StatefulSet": 1, "DaemonSet": 1}


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        if wl.obj.kind in _STRATEGY_FIELD:
            yield from _replicated(wl)
        elif wl.obj.kind == "DaemonSet":
            yield from _daemon_set(snapshot, wl)


def resolve(value: object, total: int, *, round_up: bool) -> int | None:
    """An int-or-percent against ``total``, as the controller computes it; None if invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return None


def _rolling(wl: Workload, field: str) -> dict[str, object] | None:
    strategy = mapping(wl.obj.spec.get(field))
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    rolling = mapping(strategy.get("rollingUpdate"))
    return dict(rolling) if "maxUnavailable" in rolling else None


def _replicated(wl: Workload) -> Iterator[Finding]:
    field = _STRATEGY_FIELD[wl.obj.kind]
    rolling = _rolling(wl, field)
    replicas = wl.replicas or 0
    if rolling is None or replicas < 1:
        return
    unavailable = resolve(rolling["maxUnavailable"], replicas, round_up=False)
    if unavailable is None or unavailable < replicas:
        return
    surge_value = rolling.get("maxSurge", "25%") if wl.obj.kind == "Deployment" else 0
    surge = resolve(surge_value, replicas, round_up=True) or 0
    yield SPEC.finding(
        wl.ref,
        f"{wl.obj.kind} {wl.ref.name}: every rollout may stop all {replicas} pod(s) at once",
        rule="all-pods-unavailable",
        severity=Severity.CRITICAL if surge == 0 else Severity.WARNING,
        evidence=(
            f"{field}.rollingUpdate.maxUnavailable={rolling['maxUnavailable']!r} resolves to "
            f"{unavailable} of {replicas} replica(s); maxSurge={surge_value!r} resolves to {surge}"
        ),
        params={
            "path": f"spec.{field}.rollingUpdate.maxUnavailable",
            "rolling_update_path": f"spec.{field}.rollingUpdate",
            "value": rolling["maxUnavailable"],
            "replicas": replicas,
            "max_surge": surge_value,
            "suggested": _SUGGESTED[wl.obj.kind],
        },
    )


def _daemon_set(snapshot: Snapshot, wl: Workload) -> Iterator[Finding]:
    rolling = _rolling(wl, "updateStrategy")
    if rolling is None:
        return
    value = rolling["maxUnavailable"]
    nodes = eligible_nodes(snapshot, wl.pod_spec)
    if isinstance(value, str) and value.endswith("%"):
        unsafe = (resolve(value, 100, round_up=False) or 0) >= 100
        scope = "100% of its pods"
    elif nodes:
        unsafe = (resolve(value, len(nodes), round_up=False) or 0) >= len(nodes)
        scope = f"all {len(nodes)} node(s) it runs on"
    else:
        return
    if unsafe:
        yield SPEC.finding(
            wl.ref,
            f"DaemonSet {wl.ref.name}: every rollout may stop its pods on every node at once",
            rule="all-pods-unavailable",
            evidence=f"updateStrategy.rollingUpdate.maxUnavailable={value!r} covers {scope}",
            params={
                "path": "spec.updateStrategy.rollingUpdate.maxUnavailable",
                "rolling_update_path": "spec.updateStrategy.rollingUpdate",
                "value": value,
                "suggested": _SUGGESTED["DaemonSet"],
            },
        )
