"""Restart pods that are wedged with no config change: a restart annotation on the template.

Evidence: the workload's pods run (every container started, none restarted,
none waiting) but are not Ready past the start-up time their readiness probe
allows (``initialDelaySeconds + periodSeconds x failureThreshold``, and at least
:attr:`~.evidence.Bounds.wedged_after_s`): a deadlocked worker, a connection
the process never re-opens, that its liveness probe does not see. The
workload's spec did not change recently (a change is the bisect's to judge) and
no pod sits on a NotReady node (a node fault, not the pod's). A crash loop, an image that does not
pull or a config error is not a wedge: a restart brings back the same fault.

The edit is what ``kubectl rollout restart`` does, in Git: one annotation,
``gitmedic.io/restartedAt``, on the pod template, stamped with the incident's
opening time (so a restarted bot proposes the same bytes). The new template
rolls out fresh pods through the workload's own strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gitmedic.bot.responder.levers.evidence import Evidence, set_fields
from gitmedic.bot.responder.workspace import Fix
from gitmedic.detectors.builtin._pods import age_seconds, is_ready
from gitmedic.detectors.snapshot import Obj, Snapshot, as_list, mapping

PLAYBOOK = "pod-wedged"
ANNOTATION = "gitmedic.io/restartedAt"
RESTARTABLE = frozenset({"Deployment", "StatefulSet", "DaemonSet"})


@dataclass(frozen=True)
class RestartWorkload:
    id: str = "restart"
    playbook: str = PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        wl = ev.workload() if f.resource.kind in RESTARTABLE else None
        if wl is None or ev.live is None:
            return None
        pods = ev.live_pods(wl)
        unready = [p for p in pods if not is_ready(p)]
        wedged = [p for p in unready if _wedged(ev.live, p, ev.bounds.wedged_after_s)]
        if not wedged or len(wedged) != len(unready) or _on_unready_node(ev.live, wedged):
            return None
        if ev.recent_change(wl.ref, ("spec",)) is not None:
            return None
        stamp = datetime.fromtimestamp(ev.at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        names = ", ".join(sorted(p.name for p in wedged))
        text = (
            f"{f.summary} ({f.detector}): {len(wedged)}/{len(pods)} pod(s) of {wl.ref} "
            f"({names}) run with no restart and no waiting container but are not Ready past "
            f"the start-up time their readiness probe allows, and no recent commit changed its "
            f"spec: the pods are wedged. Lever {self.id}: annotate the pod template "
            f"{ANNOTATION}={stamp} (what `kubectl rollout restart` does), so the workload "
            f"rolls out fresh pods. Risk medium: every pod is replaced; undone if the new "
            f"pods do not become Ready."
        )
        path = ("spec", "template", "metadata", "annotations", ANNOTATION)
        return set_fields(ev, wl.ref, [(path, stamp)], text, self.playbook)


RESTART = RestartWorkload()


def _wedged(live: Snapshot, pod: Obj, floor_s: float) -> bool:
    """Running, never restarted, and un-Ready past the time its readiness probe allows
    for start-up (and at least ``floor_s``)."""
    if pod.status.get("phase") != "Running":
        return False
    statuses = [mapping(s) for s in as_list(pod.status.get("containerStatuses"))]
    containers = [mapping(c) for c in as_list(pod.spec.get("containers"))]
    budgets = {str(c.get("name")): _probe_budget(c) for c in containers}
    if not statuses:
        return False
    for status in statuses:
        running = mapping(mapping(status.get("state")).get("running"))
        if not running or int(status.get("restartCount") or 0) > 0:
            return False
        age = age_seconds(live, running.get("startedAt"))
        wait = max(floor_s, budgets.get(str(status.get("name")), 0.0))
        if age is None or age < wait:
            return False
    return True


def _probe_budget(container: Mapping[str, Any]) -> float:
    """Seconds the readiness probe gives a container to become Ready (the API's defaults)."""
    probe = mapping(container.get("readinessProbe"))
    if not probe:
        return 0.0
    delay = _number(probe.get("initialDelaySeconds"), 0)
    period = _number(probe.get("periodSeconds"), 10)
    return delay + period * _number(probe.get("failureThreshold"), 3)


def _number(value: object, default: float) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )


def _on_unready_node(live: Snapshot, pods: list[Obj]) -> bool:
    nodes = {str(p.spec.get("nodeName") or "") for p in pods}
    return any(node.name in nodes and not is_ready(node) for node in live.of_kind("Node"))
