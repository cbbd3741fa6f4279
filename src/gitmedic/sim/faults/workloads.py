"""A-class faults in workloads: images, commands, probes, resources, scheduling, volumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmedic.detectors.snapshot import Snapshot, Workload, as_list, mapping
from gitmedic.sim.catalog import repository
from gitmedic.sim.faults import edit as ed
from gitmedic.sim.faults.targets import Injection, workload


def _first_container(doc: Any) -> Any:
    return ed.containers(doc)[0]


def bad_image(
    root: Path, snap: Snapshot, target: str | None = None, tag: str = "does-not-exist"
) -> Injection:
    wl = workload(snap, target)
    old = str(wl.containers(init=False)[0].body.get("image"))
    new = f"{repository(old)}:{tag}"
    ed.edit(root, wl.obj, lambda doc: _first_container(doc).__setitem__("image", new))
    return Injection("bad-image", wl.ref, f"image {old} -> {new}")


def wrong_command(
    root: Path, snap: Snapshot, target: str | None = None, command: str = "/bin/gitmedic-no-such"
) -> Injection:
    wl = workload(snap, target)
    ed.edit(root, wl.obj, lambda doc: _first_container(doc).__setitem__("command", [command]))
    return Injection("wrong-command", wl.ref, f"command -> [{command}]")


def _probe_fault(kind: str, fault: str, port: int) -> Any:
    def inject(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
        wl = workload(snap, target)

        def change(doc: Any) -> None:
            c = _first_container(doc)
            c[kind] = {"tcpSocket": {"port": port}, "periodSeconds": 5, "failureThreshold": 3}

        ed.edit(root, wl.obj, change)
        return Injection(
            fault, wl.ref, f"{kind} on port {port}, which the container does not serve"
        )

    return inject


liveness_probe_wrong = _probe_fault("livenessProbe", "liveness-probe-wrong", 9998)
readiness_probe_wrong = _probe_fault("readinessProbe", "readiness-probe-wrong", 9997)


def liveness_probe_aggressive(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = _with_probe(snap, target, "livenessProbe")

    def change(doc: Any) -> None:
        probe = _first_container(doc)["livenessProbe"]
        probe.update({"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1})

    ed.edit(root, wl.obj, change)
    return Injection(
        "liveness-probe-aggressive", wl.ref, "livenessProbe initialDelay 0, period 1, threshold 1"
    )


def memory_limit_too_small(
    root: Path, snap: Snapshot, target: str | None = None, limit: str = "8Mi"
) -> Injection:
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        res = _first_container(doc).setdefault("resources", {})
        res.setdefault("limits", {})["memory"] = limit
        if "memory" in (res.get("requests") or {}):
            res["requests"]["memory"] = limit

    ed.edit(root, wl.obj, change)
    return Injection("memory-limit-too-small", wl.ref, f"memory limit -> {limit}")


def request_too_large(
    root: Path, snap: Snapshot, target: str | None = None, request: str = "32Gi"
) -> Injection:
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        res = _first_container(doc).setdefault("resources", {})
        res.setdefault("requests", {})["memory"] = request
        if "memory" in (res.get("limits") or {}):
            res["limits"]["memory"] = request

    ed.edit(root, wl.obj, change)
    return Injection("request-too-large", wl.ref, f"memory request -> {request} (2x a node)")


def cpu_limit_too_tight(
    root: Path, snap: Snapshot, target: str | None = None, limit: str = "5m"
) -> Injection:
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        res = _first_container(doc).setdefault("resources", {})
        res.setdefault("limits", {})["cpu"] = limit
        if "cpu" in (res.get("requests") or {}):
            res["requests"]["cpu"] = limit

    ed.edit(root, wl.obj, change)
    return Injection("cpu-limit-too-tight", wl.ref, f"cpu limit -> {limit}")


def nonexistent_node(
    root: Path, snap: Snapshot, target: str | None = None, node: str = "extra-node"
) -> Injection:
    wl = workload(snap, target)
    ed.edit(
        root,
        wl.obj,
        lambda doc: ed.pod_spec(doc).__setitem__("nodeSelector", {"kubernetes.io/hostname": node}),
    )
    return Injection("nonexistent-node", wl.ref, f"nodeSelector kubernetes.io/hostname={node}")


def anti_affinity_deadlock(
    root: Path, snap: Snapshot, target: str | None = None, replicas: int = 4
) -> Injection:
    wl = workload(snap, target)
    labels = {str(k): str(v) for k, v in wl.template_labels.items()}

    def change(doc: Any) -> None:
        doc["spec"]["replicas"] = replicas
        ed.pod_spec(doc)["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": labels},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }

    ed.edit(root, wl.obj, change)
    return Injection(
        "anti-affinity-deadlock", wl.ref, f"{replicas} replicas, required anti-affinity, 3 nodes"
    )


def host_port_conflict(
    root: Path, snap: Snapshot, target: str | None = None, replicas: int = 4
) -> Injection:
    wl = _with_port(snap, target)

    def change(doc: Any) -> None:
        doc["spec"]["replicas"] = replicas
        port = _first_container(doc)["ports"][0]
        port["hostPort"] = port["containerPort"]

    ed.edit(root, wl.obj, change)
    return Injection("host-port-conflict", wl.ref, f"hostPort on {replicas} replicas, 3 nodes")


def sidecar_port_conflict(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = _with_port(snap, target)
    main = wl.containers(init=False)[0]
    port = main.ports[0].get("containerPort")
    sidecar = {
        "name": "sidecar-proxy",
        "image": str(main.body.get("image")),
        "ports": [{"containerPort": port}],
    }

    def change(doc: Any) -> None:
        ed.pod_spec(doc)["containers"].insert(0, sidecar)

    ed.edit(root, wl.obj, change)
    return Injection(
        "sidecar-port-conflict", wl.ref, f"a sidecar listens on {port} before the main container"
    )


def init_container_hang(
    root: Path, snap: Snapshot, target: str | None = None, host: str = "config-server"
) -> Injection:
    wl = workload(snap, target)
    image = str(wl.containers(init=False)[0].body.get("image"))
    init = {
        "name": "wait-for-config",
        "image": image,
        "command": ["sh", "-c", f"until nslookup {host}; do sleep 2; done"],
    }
    ed.edit(
        root, wl.obj, lambda doc: ed.pod_spec(doc).setdefault("initContainers", []).append(init)
    )
    return Injection(
        "init-container-hang",
        wl.ref,
        f"init container waits for Service {host}, which does not exist",
    )


def rollout_strategy_unsafe(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)
    ed.edit(
        root,
        wl.obj,
        lambda doc: doc["spec"].__setitem__(
            "strategy",
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}},
        ),
    )
    return Injection("rollout-strategy-unsafe", wl.ref, "maxUnavailable 100%, maxSurge 0")


def pvc_claim_broken(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = _with_volume(snap, target, "persistentVolumeClaim")

    def change(doc: Any) -> None:
        for vol in ed.pod_spec(doc)["volumes"]:
            if "persistentVolumeClaim" in vol:
                vol["persistentVolumeClaim"]["claimName"] += "-broken"
                return

    ed.edit(root, wl.obj, change)
    return Injection("pvc-claim-broken", wl.ref, "claimName += -broken")


def missing_configmap(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = _with_volume(snap, target, "configMap")
    name = next(
        str(mapping(mapping(v).get("configMap")).get("name"))
        for v in as_list(wl.pod_spec.get("volumes"))
        if mapping(v).get("configMap")
    )
    cm = snap.get("ConfigMap", wl.obj.namespace, name)
    if cm is None:
        raise ed.FaultNotApplicable(f"ConfigMap {name} is already missing")
    ed.delete(root, cm)
    return Injection(
        "missing-configmap", cm.ref, f"ConfigMap {name} deleted; {wl.obj.name} still mounts it"
    )


def configmap_key_dropped(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    for wl in sorted(snap.workloads(), key=lambda w: w.obj.name):
        for c in wl.containers(init=False):
            for env in c.env:
                ref = mapping(mapping(env.get("valueFrom")).get("configMapKeyRef"))
                cm = snap.get("ConfigMap", wl.obj.namespace, str(ref.get("name"))) if ref else None
                if cm is not None and (target is None or target == wl.obj.name):
                    key = str(ref.get("key"))
                    ed.edit(root, cm, _drop_key(key))
                    return Injection(
                        "configmap-key-dropped",
                        cm.ref,
                        f"key {key} removed; {wl.obj.name} reads it",
                    )
    raise ed.FaultNotApplicable("no container reads a ConfigMap key")


def hpa_no_cpu_request(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": wl.obj.name, "namespace": wl.obj.namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": wl.obj.name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80},
                    },
                }
            ],
        },
    }

    def change(doc: Any) -> None:
        for c in ed.containers(doc):
            ((c.get("resources") or {}).get("requests") or {}).pop("cpu", None)

    ed.edit(root, wl.obj, change)
    ed.append(root, wl.obj, body)
    return Injection(
        "hpa-no-cpu-request", wl.ref, "CPU HPA added; the target's CPU request removed"
    )


def _drop_key(key: str) -> Any:
    def change(doc: Any) -> None:
        doc["data"].pop(key)

    return change


def _with_probe(snap: Snapshot, target: str | None, kind: str) -> Workload:
    for wl in _candidates(snap, target):
        if wl.containers(init=False)[0].body.get(kind):
            return wl
    raise ed.FaultNotApplicable(f"no workload has a {kind}")


def _with_port(snap: Snapshot, target: str | None) -> Workload:
    for wl in _candidates(snap, target):
        if wl.containers(init=False)[0].ports:
            return wl
    raise ed.FaultNotApplicable("no workload declares a container port")


def _with_volume(snap: Snapshot, target: str | None, kind: str) -> Workload:
    for wl in _candidates(snap, target):
        if any(mapping(v).get(kind) for v in as_list(wl.pod_spec.get("volumes"))):
            return wl
    raise ed.FaultNotApplicable(f"no workload mounts a {kind} volume")


def _candidates(snap: Snapshot, target: str | None) -> list[Workload]:
    first = workload(snap, target)
    rest = sorted(
        (w for w in snap.workloads() if w.obj.kind == "Deployment"), key=lambda w: w.obj.name
    )
    return [first] + [w for w in rest if w.obj is not first.obj and target is None]
