"""The Deployment controller: ReplicaSets, a rolling update's pod counts, and status.

A rollout keeps the last healthy ReplicaSet's pods while the new ones are not
available, within ``maxSurge``/``maxUnavailable`` (defaults 25 %/25 %, surge
rounding up and unavailable down, as the controller does): so a bad image on a
one-replica Deployment leaves the old pod serving and the new one in
``ImagePullBackOff``, and ``maxUnavailable: 100%`` takes the service down on
every rollout. Old ReplicaSets whose pods would not run are scaled to zero at
once. ``Progressing`` turns ``False/ProgressDeadlineExceeded`` after
``progressDeadlineSeconds`` (600) without completing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.snapshot import mapping
from gitmedic.sim import ids
from gitmedic.sim.conditions import condition
from gitmedic.sim.fate import Outcome, PodFate
from gitmedic.sim.lifecycle import EventSpec
from gitmedic.sim.pods import PodIdentity, PodView
from gitmedic.sim.rollout import History, Revision
from gitmedic.sim.stamps import iso
from gitmedic.sim.world import Involved, World, owner_ref


def runs_cleanly(fate: PodFate) -> bool:
    return not fate.mount_error and all(
        f.outcome is Outcome.RUNS and (f.init or f.ready_delay_s is not None) for f in fate.all
    )


def deployment(hist: History, replicas: int, world: World) -> list[dict[str, Any]]:
    cur = hist.current
    obj = cur.workload.obj
    surge, unavailable = _strategy(obj.spec, replicas)
    stable = _stable(hist, obj.spec)
    new_views, refusal = _spawn(cur, replicas, world)
    new_count, old_count = _counts(
        new_views, replicas, surge, unavailable, stable is not None, world.now
    )
    for view in new_views[new_count:]:
        world.release(view)
    new_views = new_views[:new_count]
    old_views, _ = _spawn(stable, old_count, world) if stable is not None else ([], "")
    for view in new_views + old_views:
        world.keep(view)
    rs_objects = [
        _replicaset(
            r, hist, _kept(r, cur, stable, new_views, old_views), world, refusal if r is cur else ""
        )
        for r in hist.revisions
    ]
    body = _with_status(hist, replicas, unavailable, new_views, old_views, refusal, world)
    if obj.spec.get("replicas") != replicas:  # the API's default of 1, or what an HPA set
        body["spec"] = {**obj.spec, "replicas": replicas}
    _deployment_events(hist, world, body)
    return [body, *rs_objects]


def rs_name(rev: Revision) -> str:
    return f"{rev.workload.obj.name}-{rev.hash}"


def _strategy(spec: Mapping[str, Any], replicas: int) -> tuple[int, int]:
    strategy = mapping(spec.get("strategy"))
    if strategy.get("type") == "Recreate":
        return 0, replicas
    rolling = mapping(strategy.get("rollingUpdate"))
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, up=True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _scaled(value: Any, replicas: int, *, up: bool) -> int:
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%") and text[:-1].isdigit():
        exact = replicas * int(text[:-1]) / 100
        return math.ceil(exact) if up else math.floor(exact)
    return int(text) if text.isdigit() else 0


def _stable(hist: History, spec: Mapping[str, Any]) -> Revision | None:
    if mapping(spec.get("strategy")).get("type") == "Recreate":
        return None
    older = [r for r in hist.revisions[:-1] if runs_cleanly(r.fate)]
    return older[-1] if older else None


def _spawn(rev: Revision, count: int, world: World) -> tuple[list[PodView], str]:
    views: list[PodView] = []
    name = rs_name(rev)
    obj = rev.workload.obj
    owner = owner_ref("apps/v1", "ReplicaSet", name, ids.uid("rs", obj.namespace, name))
    template = mapping(obj.spec.get("template"))
    meta = mapping(template.get("metadata"))
    labels = {
        **{str(k): str(v) for k, v in mapping(meta.get("labels")).items()},
        "pod-template-hash": rev.hash,
    }
    for i in range(count):
        kills, created = world.kill_state(obj.namespace, obj.name, i, rev.restarted)
        who = PodIdentity(
            f"{name}-{ids.suffix(5, world.seed, name, i, kills, created)}",
            obj.namespace,
            labels,
            {str(k): str(v) for k, v in mapping(meta.get("annotations")).items()},
            mapping(template.get("spec")),
            owner,
            created,
        )
        made = world.create(who, rev.fate, f"{obj.namespace}/{obj.name}")
        if isinstance(made, str):
            return views, made
        views.append(made)
    return views, ""


def _counts(
    new: list[PodView], replicas: int, surge: int, unavailable: int, has_old: bool, now: float
) -> tuple[int, int]:
    """(new pods, old pods) where the rolling update settles at ``now``."""
    old = replicas if has_old else 0
    new_count = min(len(new), replicas)
    for _ in range(replicas + 2):
        new_count = min(len(new), replicas, max(0, replicas + surge - old))
        available = sum(1 for v in new[:new_count] if v.ready)
        old = max(0, replicas - unavailable - available) if has_old else 0
    return new_count, min(old, replicas)


def _kept(
    rev: Revision, cur: Revision, stable: Revision | None, new: list[PodView], old: list[PodView]
) -> list[PodView]:
    if rev is cur:
        return new
    return old if rev is stable else []


def _replicaset(
    rev: Revision, hist: History, pods: list[PodView], world: World, refusal: str
) -> dict[str, Any]:
    obj = rev.workload.obj
    name = rs_name(rev)
    uid = ids.uid("rs", obj.namespace, name)
    template = dict(mapping(obj.spec.get("template")))
    meta = dict(mapping(template.get("metadata")))
    labels = {**mapping(meta.get("labels")), "pod-template-hash": rev.hash}
    template["metadata"] = {**meta, "labels": labels}
    selector = dict(mapping(obj.spec.get("selector")))
    selector["matchLabels"] = {
        **mapping(selector.get("matchLabels")),
        "pod-template-hash": rev.hash,
    }
    status: dict[str, Any] = {
        "replicas": len(pods),
        "fullyLabeledReplicas": len(pods),
        "readyReplicas": sum(v.ready for v in pods),
        "availableReplicas": sum(v.ready for v in pods),
        "observedGeneration": 1,
    }
    involved = Involved("apps/v1", "ReplicaSet", obj.namespace, name, uid)
    if refusal:
        status["conditions"] = [
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": refusal,
                "lastTransitionTime": iso(rev.restarted),
            }
        ]
        world.event(
            involved,
            EventSpec(
                "FailedCreate",
                f"Error creating: {refusal}",
                rev.restarted,
                world.now,
                _every(rev.restarted, world.now, 30),
                True,
                "",
                "replicaset-controller",
            ),
        )
    for v in pods:
        created = _created(v)
        world.event(
            involved,
            EventSpec(
                "SuccessfulCreate",
                f"Created pod: {v.body['metadata']['name']}",
                created,
                created,
                1,
                False,
                "",
                "replicaset-controller",
            ),
        )
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": obj.namespace,
            "uid": uid,
            "labels": labels,
            "annotations": {"deployment.kubernetes.io/revision": str(rev.number)},
            "creationTimestamp": iso(rev.started),
            "resourceVersion": "1",
            "generation": 1,
            "ownerReferences": [
                owner_ref(
                    "apps/v1",
                    "Deployment",
                    obj.name,
                    workload_uid(obj.namespace, obj.name, "Deployment"),
                )
            ],
        },
        "spec": {"replicas": len(pods), "selector": selector, "template": template},
        "status": status,
    }


def _with_status(
    hist: History,
    replicas: int,
    unavailable: int,
    new: list[PodView],
    old: list[PodView],
    refusal: str,
    world: World,
) -> dict[str, Any]:
    cur = hist.current
    obj = cur.workload.obj
    available = sum(v.ready for v in new + old)
    new_available = sum(v.ready for v in new)
    complete = len(new) == replicas and new_available == replicas and not old
    deadline = obj.spec.get("progressDeadlineSeconds", 600)
    deadline = deadline if isinstance(deadline, int) else 600
    status: dict[str, Any] = {
        "observedGeneration": hist.generation,
        "replicas": len(new) + len(old),
        "updatedReplicas": len(new),
        "readyReplicas": available,
        "availableReplicas": available,
        "conditions": _conditions(
            cur, replicas - unavailable <= available, complete, deadline, refusal, world.now
        ),
    }
    if replicas - available > 0:
        status["unavailableReplicas"] = replicas - available
    for key in ("readyReplicas", "availableReplicas", "updatedReplicas", "replicas"):
        if status[key] == 0:
            del status[key]  # the API omits zero counts
    return workload_body(hist, status)


def _conditions(
    cur: Revision, available: bool, complete: bool, deadline: int, refusal: str, now: float
) -> list[dict[str, Any]]:
    name = rs_name(cur)
    since = iso(cur.restarted)

    def cond(kind: str, ok: bool, reason: str, message: str) -> dict[str, Any]:
        return condition(kind, ok, reason, message, since, updated=True)

    out = [
        cond("Available", True, "MinimumReplicasAvailable", "Deployment has minimum availability.")
        if available
        else cond(
            "Available",
            False,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        ),
    ]
    if complete:
        out.append(
            cond(
                "Progressing",
                True,
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}" has successfully progressed.',
            )
        )
    elif now - cur.restarted > deadline:
        out.append(
            cond(
                "Progressing",
                False,
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{name}" has timed out progressing.',
            )
        )
    else:
        out.append(
            cond("Progressing", True, "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.')
        )
    if refusal:
        out.append(cond("ReplicaFailure", True, "FailedCreate", refusal))
    return out


def _deployment_events(hist: History, world: World, body: dict[str, Any]) -> None:
    cur = hist.current
    meta = body["metadata"]
    involved = Involved("apps/v1", "Deployment", meta["namespace"], meta["name"], meta["uid"])
    replicas = body["spec"].get("replicas", 1)
    message = f"Scaled up replica set {rs_name(cur)} from 0 to {replicas}"
    world.event(
        involved,
        EventSpec(
            "ScalingReplicaSet",
            message,
            cur.started,
            cur.started,
            1,
            False,
            "",
            "deployment-controller",
        ),
    )


def workload_uid(namespace: str, name: str, kind: str) -> str:
    return ids.uid("workload", kind, namespace, name)


def workload_body(hist: History, status: dict[str, Any]) -> dict[str, Any]:
    """The applied object as the API returns it: server-set metadata plus status."""
    obj = hist.current.workload.obj
    meta = dict(obj.metadata)
    meta.update(
        uid=workload_uid(obj.namespace, obj.name, obj.kind),
        generation=hist.generation,
        resourceVersion=str(hist.generation),
        creationTimestamp=iso(hist.revisions[0].started),
    )
    if obj.kind == "Deployment":
        meta["annotations"] = {
            **mapping(meta.get("annotations")),
            "deployment.kubernetes.io/revision": str(hist.current.number),
        }
    return {**obj.body, "metadata": meta, "status": status}


def _created(view: PodView) -> float:
    from datetime import datetime

    stamp = str(view.body["metadata"]["creationTimestamp"])
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _every(first: float, now: float, period: float) -> int:
    return max(1, int((now - first) // period) + 1)
