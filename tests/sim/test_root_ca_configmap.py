"""Every live namespace holds ``kube-root-ca.crt``, as in Kubernetes 1.20+.

Without it a namespace whose only ConfigMap was deleted would list no ConfigMap at
all, and a live reader could not tell "absent" from "not listed".
"""

from __future__ import annotations

from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from tests.sim.helpers import desired, sim_for


def test_each_namespace_of_the_app_has_the_root_ca_configmap() -> None:
    state = sim_for(desired("sock-shop")).run(60)

    roots = [
        o["metadata"]["namespace"]
        for o in state.observed.objects
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kube-root-ca.crt"
    ]
    assert roots == sorted(desired("sock-shop").namespaces())


def test_a_configmap_the_app_ships_is_not_shadowed() -> None:
    shipped = desired("astronomy-shop-otel-demo")

    state = sim_for(shipped).run(60)

    names = {o["metadata"]["name"] for o in state.observed.objects if o["kind"] == "ConfigMap"}
    assert {c.name for c in shipped.of_kind("ConfigMap")} | {"kube-root-ca.crt"} == names


def test_a_mounted_configmap_missing_from_a_namespace_without_any_is_found_live() -> None:
    app = desired("sock-shop")
    wl = next(w for w in app.workloads() if w.obj.name == "carts")
    body = dict(wl.obj.body)
    spec = dict(body["spec"])
    template = dict(spec["template"])
    pod = dict(template["spec"])
    pod["volumes"] = [*pod.get("volumes", []), {"name": "cfg", "configMap": {"name": "carts-cfg"}}]
    body["spec"] = {**spec, "template": {**template, "spec": pod}}
    objs = [Obj(wl.obj.ref, body) if o is wl.obj else o for o in app]
    broken = Snapshot(objs, mode=Mode.DESIRED)

    live = sim_for(broken).run(120).observed.snapshot
    rules = {f"{f.detector}/{f.rule}" for f in run_detectors(builtin_registry(), live).findings}

    assert "missing-reference/configmap-missing" in rules
