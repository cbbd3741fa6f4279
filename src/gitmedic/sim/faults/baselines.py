"""Healthy baseline extensions: the object a fault breaks, added first where an app lacks it.

Three faults break an object most real apps do not have: configmap-key-dropped
and missing-configmap need a container that reads a ConfigMap (a key through
``env.valueFrom`` and a mounted file), pvc-claim-broken needs a workload on a
PersistentVolumeClaim. Of the bundled apps only astronomy-shop-otel-demo wires
ConfigMaps and only hotel-reservation uses claims, so without help each fault
could be shown on one app only.

These helpers give an app that lacks the prerequisite the change its own
maintainers would make to get it, as a separate, benign commit before the fault:
a ``<workload>-config`` ConfigMap read through ``configMapKeyRef`` and mounted
read-only, or a ``<database>-data`` claim on the cluster's default StorageClass
in place of the database's scratch ``emptyDir``. The extension must leave the
app healthy (the fault tests assert it) so the fault that follows is the only
thing that breaks it. An app that already has the prerequisite is left alone:
each helper returns ``None`` then, and the fault breaks the app's own object.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmedic.detectors.snapshot import Snapshot, Workload, as_list, mapping
from gitmedic.sim.catalog import repository
from gitmedic.sim.faults import edit as ed
from gitmedic.sim.faults.targets import Injection, workload
from gitmedic.sim.storage import DEFAULT_CLASS

Extend = Callable[[Path, Snapshot], Injection | None]

# where each database image keeps its data (the path a claim replaces scratch space at)
DATA_DIRS = {
    "mongo": "/data/db",
    "redis": "/data",
    "valkey": "/data",
    "postgres": "/var/lib/postgresql/data",
    "mysql": "/var/lib/mysql",
    "mariadb": "/var/lib/mysql",
}
_LOG_LEVEL_NAMES = ("LOG_LEVEL", "APP_LOG_LEVEL", "SERVICE_LOG_LEVEL")


def configmap_wired(root: Path, snap: Snapshot) -> Injection | None:
    """Give the default target workload a ConfigMap it reads by key and mounts as a file.

    Needed by configmap-key-dropped (a key read through ``configMapKeyRef``) and
    missing-configmap (a mounted ConfigMap); ``None`` when the app has both already.
    """
    if _reads_configmap_key(snap) and _mounts_configmap(snap):
        return None
    wl = workload(snap, None)
    name = f"{wl.obj.name}-config"
    if snap.has("ConfigMap", wl.obj.namespace, name):
        raise ed.FaultNotApplicable(f"ConfigMap {name} exists but is not wired")
    env_name = _free_env_name(wl)
    mount = f"/etc/{wl.obj.name}"
    ed.edit(root, wl.obj, _wire_configmap(name, env_name, mount))
    ed.append(root, wl.obj, _configmap(wl, name))
    return Injection(
        "configmap-wired",
        wl.ref,
        f"ConfigMap {name}: {env_name} from key log-level, mounted read-only at {mount}",
    )


def database_claim(root: Path, snap: Snapshot) -> Injection | None:
    """Move a database's data from scratch space onto a claim of the default StorageClass.

    Needed by pvc-claim-broken (a pod volume on a PersistentVolumeClaim); ``None``
    when a Deployment already mounts a claim.
    """
    if _mounts_claim(snap):
        return None
    wl, data_dir = _database(snap)
    claim = f"{wl.obj.name}-data"
    if snap.has("PersistentVolumeClaim", wl.obj.namespace, claim):
        raise ed.FaultNotApplicable(f"PersistentVolumeClaim {claim} exists but is not mounted")
    ed.edit(root, wl.obj, _mount_claim(claim, data_dir))
    ed.append(root, wl.obj, _claim(wl, claim))
    return Injection(
        "database-claim",
        wl.ref,
        f"{data_dir} on PersistentVolumeClaim {claim} (StorageClass {DEFAULT_CLASS})",
    )


def _reads_configmap_key(snap: Snapshot) -> bool:
    return any(
        snap.has("ConfigMap", wl.obj.namespace, str(ref.get("name")))
        for wl in snap.workloads()
        for c in wl.containers(init=False)
        for env in c.env
        if (ref := mapping(mapping(env.get("valueFrom")).get("configMapKeyRef")))
    )


def _mounts_configmap(snap: Snapshot) -> bool:
    return any(
        snap.has("ConfigMap", wl.obj.namespace, str(cm.get("name")))
        for wl in snap.workloads()
        if wl.obj.kind == "Deployment"
        for v in as_list(wl.pod_spec.get("volumes"))
        if (cm := mapping(mapping(v).get("configMap")))
    )


def _mounts_claim(snap: Snapshot) -> bool:
    return any(
        mapping(v).get("persistentVolumeClaim")
        for wl in snap.workloads()
        if wl.obj.kind == "Deployment"
        for v in as_list(wl.pod_spec.get("volumes"))
    )


def _free_env_name(wl: Workload) -> str:
    taken = {str(e.get("name")) for c in wl.containers(init=False) for e in c.env}
    return next(n for n in _LOG_LEVEL_NAMES if n not in taken)


def _wire_configmap(name: str, env_name: str, mount: str) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        c = ed.containers(doc)[0]
        ref = {"configMapKeyRef": {"name": name, "key": "log-level"}}
        _list_at(c, "env").append({"name": env_name, "valueFrom": ref})
        _list_at(c, "volumeMounts").append({"name": "config", "mountPath": mount})
        c["volumeMounts"][-1]["readOnly"] = True
        _list_at(ed.pod_spec(doc), "volumes").append(
            {"name": "config", "configMap": {"name": name}}
        )

    return change


def _configmap(wl: Workload, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": wl.obj.namespace},
        "data": {"log-level": "info", "settings.yaml": "logging:\n  format: json\n"},
    }


def _database(snap: Snapshot) -> tuple[Workload, str]:
    for wl in sorted(snap.workloads(), key=lambda w: w.obj.name):
        if wl.obj.kind != "Deployment":
            continue
        image = repository(str(wl.containers(init=False)[0].body.get("image")))
        for engine, data_dir in DATA_DIRS.items():
            if image.rsplit("/", 1)[-1].startswith(engine):
                return wl, data_dir
    raise ed.FaultNotApplicable(f"no Deployment runs a database ({', '.join(DATA_DIRS)})")


def _mount_claim(claim: str, data_dir: str) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        c = ed.containers(doc)[0]
        mounts = _list_at(c, "volumeMounts")
        at = next((m for m in mounts if m["mountPath"] == data_dir), None)
        volumes = _list_at(ed.pod_spec(doc), "volumes")
        source = {"persistentVolumeClaim": {"claimName": claim}}
        if at is None:  # no scratch volume there yet: a new one
            mounts.append({"name": "data", "mountPath": data_dir})
            volumes.append({"name": "data", **source})
            return
        vol = next(v for v in volumes if v["name"] == at["name"])
        vol.pop("emptyDir", None)
        vol.update(source)

    return change


def _claim(wl: Workload, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": wl.obj.namespace},
        "spec": {
            "storageClassName": DEFAULT_CLASS,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def _list_at(doc: Any, key: str) -> Any:
    """The list at ``key``, created when absent or written as null (``volumeMounts:``)."""
    if doc.get(key) is None:
        doc[key] = []
    return doc[key]
