"""StatefulSets, DaemonSets and bare Pods: the other ways pods come to exist.

A StatefulSet creates ``<name>-0`` .. ``<name>-N-1`` in order (``OrderedReady``:
the next ordinal only once the previous is Ready; ``Parallel`` all at once), and
an update replaces them in place. Its ``volumeClaimTemplates`` become claims
``<template>-<name>-<ordinal>`` which the storage model binds. A DaemonSet runs
one pod on every node its selector and affinity allow.
"""

from __future__ import annotations

from typing import Any

from gitmedic.detectors.snapshot import as_list, mapping
from gitmedic.sim import ids
from gitmedic.sim.clock import iso
from gitmedic.sim.deployments import workload_body, workload_uid
from gitmedic.sim.pods import PodIdentity, PodView
from gitmedic.sim.rollout import History
from gitmedic.sim.scheduling import label_selector_matches
from gitmedic.sim.world import World, owner_ref


def statefulset(hist: History, replicas: int, world: World) -> list[dict[str, Any]]:
    cur = hist.current
    obj = cur.workload.obj
    revision = f"{obj.name}-{cur.hash}"
    parallel = obj.spec.get("podManagementPolicy") == "Parallel"
    owner = owner_ref(
        "apps/v1", "StatefulSet", obj.name, workload_uid(obj.namespace, obj.name, obj.kind)
    )
    views: list[PodView] = []
    start = cur.restarted
    for i in range(replicas):
        pod_name = f"{obj.name}-{i}"
        _, created = world.kill_state(obj.namespace, obj.name, i, start)
        labels = {
            **_template_labels(obj.spec),
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": pod_name,
            "apps.kubernetes.io/pod-index": str(i),
        }
        who = PodIdentity(
            pod_name, obj.namespace, labels, {}, _with_claims(obj.spec, obj.name, i), owner, created
        )
        made = world.create(who, cur.fate, f"{obj.namespace}/{obj.name}")
        if isinstance(made, str):
            break
        world.keep(made)
        views.append(made)
        if not parallel:
            if not made.ready or made.ready_at is None:
                break
            start = made.ready_at
    ready = sum(v.ready for v in views)
    status = {
        "observedGeneration": hist.generation,
        "replicas": len(views),
        "readyReplicas": ready,
        "currentReplicas": len(views),
        "updatedReplicas": len(views),
        "availableReplicas": ready,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
    }
    return [workload_body(hist, status)]


def claim_templates(spec: dict[str, Any] | Any, name: str, replicas: int) -> list[tuple[str, Any]]:
    """(claim name, template) for every ordinal of a StatefulSet."""
    out = []
    for tpl in as_list(mapping(spec).get("volumeClaimTemplates")):
        tname = str(mapping(mapping(tpl).get("metadata")).get("name", ""))
        out += [(f"{tname}-{name}-{i}", tpl) for i in range(replicas)]
    return out


def daemonset(hist: History, world: World) -> list[dict[str, Any]]:
    cur = hist.current
    obj = cur.workload.obj
    owner = owner_ref(
        "apps/v1", "DaemonSet", obj.name, workload_uid(obj.namespace, obj.name, obj.kind)
    )
    spec = mapping(mapping(obj.spec.get("template")).get("spec"))
    selector = {str(k): str(v) for k, v in mapping(spec.get("nodeSelector")).items()}
    eligible = [
        n for n in world.nodes if label_selector_matches({"matchLabels": selector}, n.labels)
    ]
    views = []
    for i, node in enumerate(eligible):
        kills, created = world.kill_state(obj.namespace, obj.name, i, cur.restarted)
        pinned = {**spec, "nodeSelector": {**selector, "kubernetes.io/hostname": node.name}}
        who = PodIdentity(
            f"{obj.name}-{ids.suffix(5, world.seed, obj.name, cur.hash, i, kills)}",
            obj.namespace,
            {**_template_labels(obj.spec), "controller-revision-hash": cur.hash},
            {},
            pinned,
            owner,
            created,
        )
        made = world.create(who, cur.fate, f"{obj.namespace}/{obj.name}")
        if not isinstance(made, str):
            world.keep(made)
            views.append(made)
    ready = sum(v.ready for v in views)
    status = {
        "observedGeneration": hist.generation,
        "currentNumberScheduled": len(views),
        "desiredNumberScheduled": len(eligible),
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": len(views),
    }
    if len(eligible) - ready:
        status["numberUnavailable"] = len(eligible) - ready
    return [workload_body(hist, status)]


def bare_pod(hist: History, world: World) -> list[dict[str, Any]]:
    cur = hist.current
    obj = cur.workload.obj
    who = PodIdentity(
        obj.name,
        obj.namespace,
        {str(k): str(v) for k, v in obj.labels.items()},
        {str(k): str(v) for k, v in obj.annotations.items()},
        obj.spec,
        {},
        cur.restarted,
    )
    made = world.create(who, cur.fate, f"{obj.namespace}/{obj.name}")
    if isinstance(made, str):
        return []
    world.keep(made)
    made.body["metadata"]["creationTimestamp"] = iso(cur.restarted)
    return []


def _template_labels(spec: Any) -> dict[str, str]:
    meta = mapping(mapping(mapping(spec).get("template")).get("metadata"))
    return {str(k): str(v) for k, v in mapping(meta.get("labels")).items()}


def _with_claims(spec: Any, name: str, ordinal: int) -> dict[str, Any]:
    pod_spec = dict(mapping(mapping(mapping(spec).get("template")).get("spec")))
    volumes = list(as_list(pod_spec.get("volumes")))
    for tpl in as_list(mapping(spec).get("volumeClaimTemplates")):
        tname = str(mapping(mapping(tpl).get("metadata")).get("name", ""))
        volumes.append(
            {"name": tname, "persistentVolumeClaim": {"claimName": f"{tname}-{name}-{ordinal}"}}
        )
    if volumes:
        pod_spec["volumes"] = volumes
    return pod_spec
