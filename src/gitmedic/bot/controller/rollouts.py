"""Workloads still starting up: findings their own start-up explains open no incident.

A benign commit (a replica bump, a label or annotation on the pod template, a new
env var) starts a rollout, and a slow starter (sock-shop's and train-ticket's
JVMs wait 160-300 s before their first readiness probe) is not Ready for
minutes: its Deployment is short of available replicas and its Service may have
no ready endpoint. That is the rollout working, not a fault, for as long as the
workload controller still counts it as progressing, i.e. within its
``progressDeadlineSeconds``.

A workload is *starting* when its rollout is progressing and nothing has gone
wrong with its pods yet:

- a Deployment whose ``Progressing`` condition is True with a reason other than
  ``NewReplicaSetAvailable`` (the controller turns it False,
  ``ProgressDeadlineExceeded``, once the deadline passes); a StatefulSet or
  DaemonSet whose not-Ready pods are all younger than the default deadline
  (they have no such condition);
- and none of its pods is failing: no container restarted, terminated or
  waiting for any reason but ``ContainerCreating``/``PodInitializing``, and no
  pod unschedulable.

Explained findings are ``deployment-unavailable/unavailable`` on a starting
workload and ``service-no-endpoints`` on a Service whose every wanting workload
is starting. Anything else (a crash loop, an image that does not pull, a desired-
state finding) is never explained; and after the deadline nothing is.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitmedic.detectors.builtin._pods import age_seconds, container_states
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping

DEFAULT_DEADLINE_S = 600.0  # the Deployment default, for kinds without the condition
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
STARTING_REASONS = frozenset({"ContainerCreating", "PodInitializing"})
_DONE = "NewReplicaSetAvailable"


def starting(snapshot: Snapshot) -> frozenset[Resource]:
    """The workloads whose rollout is progressing, within its deadline, with no pod failing."""
    failing = {snapshot.owner_workload(p) for p in snapshot.of_kind("Pod") if _failing(p)}
    out = set()
    for wl in snapshot.workloads():
        ref = wl.obj.ref
        if wl.obj.kind in WORKLOAD_KINDS and ref not in failing and _progressing(snapshot, wl.obj):
            out.add(ref)
    return frozenset(out)


def explained(finding: Finding, rolling: frozenset[Resource]) -> bool:
    """Is this finding what a starting workload looks like (see the module docstring)?"""
    if finding.detector == "deployment-unavailable":
        return finding.rule == "unavailable" and finding.resource in rolling
    if finding.detector == "service-no-endpoints":
        wanting = [r for r in finding.related if r.kind in WORKLOAD_KINDS]
        return bool(wanting) and all(r in rolling for r in wanting)
    return False


def held_back(
    findings: Iterable[Finding], snapshot: Snapshot
) -> tuple[list[Finding], list[Finding]]:
    """(findings that count, findings explained by a rollout still within its deadline)."""
    found = list(findings)
    rolling = starting(snapshot) if found else frozenset()
    kept: list[Finding] = []
    held: list[Finding] = []
    for f in found:
        (held if explained(f, rolling) else kept).append(f)
    return kept, held


def _progressing(snapshot: Snapshot, obj: Obj) -> bool:
    if obj.kind == "Deployment":
        cond = _condition(obj.status, "Progressing")
        return cond.get("status") == "True" and cond.get("reason") != _DONE
    selector = mapping(mapping(obj.spec.get("selector")).get("matchLabels"))
    pods = snapshot.pods_selected_by(obj.namespace, selector) if selector else []
    unready = [p for p in pods if _condition(p.status, "Ready").get("status") != "True"]
    return bool(unready) and all(_young(snapshot, p) for p in unready)


def _young(snapshot: Snapshot, pod: Obj) -> bool:
    age = age_seconds(snapshot, pod.metadata.get("creationTimestamp"))
    return age is not None and age < DEFAULT_DEADLINE_S


def _failing(pod: Obj) -> bool:
    if _condition(pod.status, "PodScheduled").get("status") == "False":
        return True
    for state in container_states(pod):
        if state.restarts or (state.terminated and not state.init):
            return True
        reason = state.waiting.get("reason")
        if state.waiting and reason not in STARTING_REASONS:
            return True
    return False


def _condition(status: JSON, kind: str) -> JSON:
    for cond in as_list(status.get("conditions")):
        if mapping(cond).get("type") == kind:
            return mapping(cond)
    return {}
