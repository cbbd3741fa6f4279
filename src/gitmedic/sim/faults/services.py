"""A-class faults in Services, env addresses and network objects (FAULTS.md, section A).

Each function edits the app's manifests under ``root`` (the repo root the
snapshot's sources are relative to) and returns what it changed. Parameters
name the target object and the bad value; defaults are chosen so the fault
is visible (a Service other workloads call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.sim.faults import edit as ed
from gitmedic.sim.faults.targets import Injection, address_call, behind, service, workload


def service_target_port(
    root: Path, snap: Snapshot, target: str | None = None, port: int = 9999
) -> Injection:
    svc = service(snap, target)
    old: list[Any] = []

    def change(doc: Any) -> None:
        first = doc["spec"]["ports"][0]
        old.append(first.get("targetPort", first.get("port")))
        first["targetPort"] = port

    ed.edit(root, svc, change)
    return Injection("service-target-port", svc.ref, f"targetPort {old[0]} -> {port}")


def service_selector_mismatch(
    root: Path,
    snap: Snapshot,
    target: str | None = None,
    label: str = "tier",
    value: str = "gitmedic-fault",
) -> Injection:
    svc = service(snap, target)
    ed.edit(root, svc, lambda doc: doc["spec"]["selector"].__setitem__(label, value))
    return Injection("service-selector-mismatch", svc.ref, f"selector gains {label}={value}")


def service_selector_polluted(
    root: Path,
    snap: Snapshot,
    target: str | None = None,
    label: str = "tier",
    value: str = "backend",
) -> Injection:
    """Widen a Service's selector to a label its workload shares with a second workload."""
    svc = service(snap, target)
    mine = behind(snap, svc)
    other = next(
        (
            w
            for w in sorted(snap.workloads(svc.namespace), key=lambda w: w.obj.name)
            if w.obj.kind == "Deployment" and w.obj.name != mine.obj.name
        ),
        None,
    )
    if other is None:
        raise ed.FaultNotApplicable("no second workload to pollute the selector with")
    edits = [(wl.obj, _add_template_label(label, value)) for wl in (mine, other)]
    edits.append((svc, lambda doc: doc["spec"].__setitem__("selector", {label: value})))
    # Bottom-up, so an edit never moves the lines of an object still to be edited.
    for obj, change in sorted(edits, key=lambda e: _position(e[0]), reverse=True):
        ed.edit(root, obj, change)
    return Injection(
        "service-selector-polluted", svc.ref, f"selector -> {label}={value}, also {other.obj.name}"
    )


def _position(obj: Obj) -> tuple[str, int]:
    return (obj.source.file, obj.source.line) if obj.source else ("", 0)


def _add_template_label(label: str, value: str) -> Any:
    def change(doc: Any) -> None:
        doc["spec"]["template"]["metadata"]["labels"][label] = value

    return change


def missing_service(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    svc = service(snap, target, only_called=True)
    ed.delete(root, svc)
    return Injection("missing-service", svc.ref, "Service deleted; callers still address it")


def env_wrong_port(
    root: Path, snap: Snapshot, target: str | None = None, delta: int = 2
) -> Injection:
    call = address_call(snap, target)
    old_port = call.address.port
    new_port = (old_port or 0) + delta

    def change(doc: Any) -> None:
        env = _container(doc, call.container.name)["env"][call.env_index]
        env["value"] = str(env["value"]).replace(f":{old_port}", f":{new_port}", 1)

    ed.edit(root, call.caller.obj, change)
    return Injection(
        "env-wrong-port", call.caller.ref, f"env {call.env} port {old_port} -> {new_port}"
    )


def env_missing(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    call = address_call(snap, target, with_port=False)
    ed.edit(
        root,
        call.caller.obj,
        lambda doc: _container(doc, call.container.name)["env"].pop(call.env_index),
    )
    return Injection("env-missing", call.caller.ref, f"env {call.env} removed")


def env_shadowed(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    call = address_call(snap, target)
    value = f"localhost:{call.address.port}"
    ed.edit(
        root,
        call.caller.obj,
        lambda doc: _container(doc, call.container.name)["env"].append(
            {"name": call.env, "value": value}
        ),
    )
    return Injection(
        "env-shadowed", call.caller.ref, f"env {call.env} set again to {value}; the later wins"
    )


def network_policy_deny_all(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    svc = service(snap, target)
    selector = {str(k): str(v) for k, v in (svc.spec.get("selector") or {}).items()}
    body = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": f"{svc.name}-deny-all", "namespace": svc.namespace},
        "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Ingress"]},
    }
    ed.append(root, svc, body)
    return Injection(
        "network-policy-deny-all", svc.ref, f"NetworkPolicy {svc.name}-deny-all isolates its pods"
    )


def dns_policy_none(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    call = address_call(snap, target, with_port=False)

    def change(doc: Any) -> None:
        spec = ed.pod_spec(doc)
        spec["dnsPolicy"] = "None"
        spec["dnsConfig"] = {"nameservers": ["8.8.8.8"]}

    ed.edit(root, call.caller.obj, change)
    return Injection("dns-policy-none", call.caller.ref, "dnsPolicy None, nameservers [8.8.8.8]")


def scaled_to_zero(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)
    ed.edit(root, wl.obj, lambda doc: doc["spec"].__setitem__("replicas", 0))
    return Injection("scaled-to-zero", wl.ref, f"replicas {wl.replicas} -> 0")


def resource_quota_blocks(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)
    body = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "compute-quota", "namespace": wl.obj.namespace},
        "spec": {
            "hard": {
                "limits.cpu": "64",
                "limits.memory": "64Gi",
                "requests.cpu": "32",
                "requests.memory": "32Gi",
            }
        },
    }
    _strip_resource(root, wl, "requests")
    ed.append(root, wl.obj, body)
    return Injection(
        "resource-quota-blocks", wl.ref, "ResourceQuota requires requests the pods lack"
    )


def _strip_resource(root: Path, wl: Any, section: str) -> None:
    def change(doc: Any) -> None:
        for c in ed.containers(doc):
            resources = c.get("resources") or {}
            resources.pop(section, None)

    ed.edit(root, wl.obj, change)


def _container(doc: Any, name: str) -> Any:
    for c in ed.containers(doc) + ed.containers(doc, init=True):
        if c.get("name") == name:
            return c
    raise ed.FaultNotApplicable(f"no container {name}")
