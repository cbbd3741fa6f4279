"""Rendering one pod object (status, conditions, events) from its fate and placement.

Phase and conditions follow the kubelet: a pod the scheduler could not place is
``Pending`` with ``PodScheduled=False/Unschedulable``; a pod whose volumes fail
to mount or whose init containers have not finished is ``Pending`` with its
containers waiting (``ContainerCreating``, ``PodInitializing``); once a container
has started the pod is ``Running`` (a crash-looping pod stays ``Running``), and
``Ready`` only when every container is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitmedic.sim import ids
from gitmedic.sim.fate import Outcome, PodFate
from gitmedic.sim.lifecycle import (
    ContainerView,
    EventSpec,
    container_view,
    inits_done,
    pod_start,
)
from gitmedic.sim.stamps import iso


@dataclass(frozen=True)
class PodIdentity:
    name: str
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    spec: Mapping[str, Any]
    owner: Mapping[str, Any]  # an ownerReference
    created: float


@dataclass
class PodView:
    body: dict[str, Any]
    ready: bool
    ready_at: float | None
    node: str | None
    ip: str
    misbehaves: bool
    events: list[EventSpec] = field(default_factory=list)
    node_events: list[EventSpec] = field(default_factory=list)
    serving: bool = False  # running and not terminating


def render_pod(
    who: PodIdentity,
    fate: PodFate,
    node: str | None,
    node_prefix: str,
    unschedulable: str,
    now: float,
    seed: int,
) -> PodView:
    uid = ids.uid("pod", who.namespace, who.name, who.created)
    body = _skeleton(who, uid, node)
    if node is None:
        return _pending(body, who, unschedulable, now)
    ip = ids.ip(node_prefix, who.namespace, who.name, who.created)
    start = pod_start(who.created, seed, who.name)
    events = [
        EventSpec(
            "Scheduled",
            f"Successfully assigned {who.namespace}/{who.name} to {node}",
            who.created,
            who.created,
            1,
            False,
            "",
            "default-scheduler",
        )
    ]
    if fate.mount_error:
        return _mount_blocked(body, who, fate, node, ip, events, now)
    inits = _init_views(fate, uid, start, now)
    done = inits_done(fate, start)
    mains = [
        container_view(f, uid, done, now) if done is not None else _not_started(f.name, f.image)
        for f in fate.containers
    ]
    for container in inits + mains:
        events.extend(container.events)
    ready = bool(mains) and all(v.ready for v in mains)
    ready_at = max((v.ready_at or now for v in mains), default=now) if ready else None
    initialized = done is not None and done <= now
    started = any(v.started or v.status.get("restartCount") for v in mains)
    phase = "Running" if initialized and started else "Pending"
    body["status"] = {
        "phase": phase,
        "conditions": _conditions(who.created, start, initialized, ready, ready_at, done),
        "hostIP": _host_ip(node_prefix),
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": iso(who.created),
        "qosClass": _qos(who.spec),
        "containerStatuses": [v.status for v in mains],
    }
    if inits:
        body["status"]["initContainerStatuses"] = [v.status for v in inits]
    misbehaves = any(f.misbehaves for f in fate.containers)
    view = PodView(body, ready, ready_at, node, ip, misbehaves, events, serving=started)
    view.node_events = _oom_events(fate, mains, who)
    return view


def _skeleton(who: PodIdentity, uid: str, node: str | None) -> dict[str, Any]:
    spec = dict(who.spec)
    if node:
        spec["nodeName"] = node
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", str(spec.get("serviceAccount") or "default"))
    meta: dict[str, Any] = {
        "name": who.name,
        "namespace": who.namespace,
        "uid": uid,
        "labels": dict(who.labels),
        "creationTimestamp": iso(who.created),
        "resourceVersion": "1",
    }
    if who.annotations:
        meta["annotations"] = dict(who.annotations)
    if who.owner:
        meta["ownerReferences"] = [dict(who.owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pending(body: dict[str, Any], who: PodIdentity, message: str, now: float) -> PodView:
    body["status"] = {
        "phase": "Pending",
        "qosClass": _qos(who.spec),
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastTransitionTime": iso(who.created),
            }
        ],
    }
    event = EventSpec(
        "FailedScheduling",
        message,
        who.created,
        now,
        max(1, int((now - who.created) // 60) + 1),
        True,
        "",
        "default-scheduler",
    )
    return PodView(body, False, None, None, "", False, [event])


def _mount_blocked(
    body: dict[str, Any],
    who: PodIdentity,
    fate: PodFate,
    node: str,
    ip: str,
    events: list[EventSpec],
    now: float,
) -> PodView:
    waiting = [
        {
            "name": f.name,
            "image": f.image,
            "ready": False,
            "restartCount": 0,
            "imageID": "",
            "started": False,
            "state": {"waiting": {"reason": "ContainerCreating"}},
        }
        for f in fate.containers
    ]
    body["status"] = {
        "phase": "Pending",
        "conditions": _conditions(who.created, who.created, False, False, None, None),
        "hostIP": "",
        "startTime": iso(who.created),
        "qosClass": _qos(who.spec),
        "containerStatuses": waiting,
    }
    del body["status"]["hostIP"]
    count = max(1, int((now - who.created) // 120) + 1)
    events.append(EventSpec("FailedMount", fate.mount_error, who.created, now, count, True))
    return PodView(body, False, None, node, ip, False, events)


def _init_views(fate: PodFate, uid: str, start: float, now: float) -> list[ContainerView]:
    views: list[ContainerView] = []
    t = start
    for f in fate.inits:
        view = container_view(f, uid, t, now)
        views.append(view)
        if not view.done:
            views += [
                _not_started(g.name, g.image, "PodInitializing") for g in fate.inits[len(views) :]
            ]
            break
        t += 1.0
    return views


def _not_started(name: str, image: str, reason: str = "PodInitializing") -> ContainerView:
    status = {
        "name": name,
        "image": image,
        "ready": False,
        "restartCount": 0,
        "imageID": "",
        "started": False,
        "state": {"waiting": {"reason": reason}},
    }
    return ContainerView(status, False, False, False, None)


def _conditions(
    created: float,
    start: float,
    initialized: bool,
    ready: bool,
    ready_at: float | None,
    done: float | None,
) -> list[dict[str, Any]]:
    def cond(kind: str, ok: bool, at: float, reason: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": kind,
            "status": "True" if ok else "False",
            "lastTransitionTime": iso(at),
        }
        if reason and not ok:
            out["reason"] = reason
        return out

    ready_t = ready_at if ready and ready_at is not None else start
    return [
        cond("PodReadyToStartContainers", True, start),
        cond(
            "Initialized",
            initialized,
            done if initialized and done else created,
            "ContainersNotInitialized",
        ),
        cond("Ready", ready, ready_t, "ContainersNotReady"),
        cond("ContainersReady", ready, ready_t, "ContainersNotReady"),
        cond("PodScheduled", True, created),
    ]


def _oom_events(fate: PodFate, mains: list[ContainerView], who: PodIdentity) -> list[EventSpec]:
    out = []
    for f, view in zip(fate.containers, mains, strict=True):
        last = view.status.get("lastState", {}).get("terminated", {})
        if f.outcome is Outcome.CRASHES and f.exit_reason == "OOMKilled" and last:
            out.append(
                EventSpec(
                    "OOMKilling",
                    f"Memory cgroup out of memory: Killed process (container {f.name}) in pod "
                    f"{who.namespace}/{who.name}",
                    who.created,
                    who.created,
                    int(view.status.get("restartCount", 0)) + 1,
                    True,
                    "",
                    "kernel-monitor",
                )
            )
    return out


def _host_ip(prefix: str) -> str:
    return f"172.18.0.{int(prefix.split('.')[1]) - 244 + 2}"  # the node's internal_ip


def _qos(spec: Mapping[str, Any]) -> str:
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    res = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in res):
        return "BestEffort"
    # ``limits:`` with nothing under it is null (a Helm chart's default values): no limits
    limits = [r.get("limits") or {} for r in res]
    requests = [r.get("requests") or {} for r in res]
    guaranteed = all(
        lim.get(k) and lim.get(k) == req.get(k, lim[k])
        for lim, req in zip(limits, requests, strict=True)
        for k in ("cpu", "memory")
    )
    return "Guaranteed" if guaranteed else "Burstable"
