"""Where a pod spec names other objects: ConfigMaps, Secrets, PVCs, ServiceAccounts.

Every reference carries the JSON path of the field that makes it (from the top of
the workload object), so a finding can say exactly which line to fix and a fix
can edit exactly that field. Covered: env ``valueFrom`` (configMapKeyRef,
secretKeyRef), ``envFrom``, volumes (configMap, secret, persistentVolumeClaim,
projected configMap/secret sources, with their ``items`` keys),
``imagePullSecrets`` and ``serviceAccountName`` (``default`` when unset). A
StatefulSet's pod volume named like one of its ``volumeClaimTemplates`` is
replaced by that template's claim, and is no reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gitmedic.detectors.snapshot import JSON, Workload, as_list, mapping

CONFIGMAP = "ConfigMap"
SECRET = "Secret"
PVC = "PersistentVolumeClaim"
SERVICE_ACCOUNT = "ServiceAccount"

_POD_SPEC_PATH = {
    "Pod": "spec",
    "CronJob": "spec.jobTemplate.spec.template.spec",
}


@dataclass(frozen=True)
class Reference:
    kind: str
    name: str
    key: str | None  # a key inside a ConfigMap/Secret, when one is named
    optional: bool
    via: str  # env, envFrom, volume, projected volume, imagePullSecrets, serviceAccountName
    path: str  # JSON path of the referencing field, e.g. spec.template.spec.volumes[2].configMap
    container: str = ""  # empty for pod-level references


def pod_spec_path(kind: str) -> str:
    return _POD_SPEC_PATH.get(kind, "spec.template.spec")


def references(wl: Workload) -> Iterator[Reference]:
    base = pod_spec_path(wl.obj.kind)
    spec = wl.pod_spec
    for section in ("initContainers", "containers"):
        for i, container in enumerate(as_list(spec.get(section))):
            yield from _container_refs(mapping(container), f"{base}.{section}[{i}]")
    claimed = _claim_templates(wl)
    for i, volume in enumerate(as_list(spec.get("volumes"))):
        if mapping(volume).get("name") in claimed:
            continue  # the StatefulSet controller puts the template's claim in its place
        yield from _volume_refs(mapping(volume), f"{base}.volumes[{i}]")
    for i, secret in enumerate(as_list(spec.get("imagePullSecrets"))):
        name = mapping(secret).get("name")
        if isinstance(name, str) and name:
            path = f"{base}.imagePullSecrets[{i}]"
            yield Reference(SECRET, name, None, False, "imagePullSecrets", path)
    yield _service_account(spec, base)


def _claim_templates(wl: Workload) -> set[str]:
    """Names of a StatefulSet's ``volumeClaimTemplates``: each replaces the pod volume of
    that name with the replica's own claim (``<template>-<statefulset>-<ordinal>``)."""
    if wl.obj.kind != "StatefulSet":
        return set()
    templates = as_list(wl.obj.spec.get("volumeClaimTemplates"))
    names = (mapping(mapping(t).get("metadata")).get("name") for t in templates)
    return {n for n in names if isinstance(n, str) and n}


def _container_refs(container: JSON, path: str) -> Iterator[Reference]:
    name = str(container.get("name", ""))
    for j, env in enumerate(as_list(container.get("env"))):
        value_from = mapping(mapping(env).get("valueFrom"))
        for field, kind in (("configMapKeyRef", CONFIGMAP), ("secretKeyRef", SECRET)):
            ref = mapping(value_from.get(field))
            if ref.get("name"):
                yield Reference(
                    kind,
                    str(ref["name"]),
                    str(ref.get("key", "")),
                    ref.get("optional") is True,
                    "env",
                    f"{path}.env[{j}].valueFrom.{field}",
                    name,
                )
    for j, source in enumerate(as_list(container.get("envFrom"))):
        for field, kind in (("configMapRef", CONFIGMAP), ("secretRef", SECRET)):
            ref = mapping(mapping(source).get(field))
            if ref.get("name"):
                yield Reference(
                    kind,
                    str(ref["name"]),
                    None,
                    ref.get("optional") is True,
                    "envFrom",
                    f"{path}.envFrom[{j}].{field}",
                    name,
                )


def _volume_refs(volume: JSON, path: str) -> Iterator[Reference]:
    yield from _keyed_source(mapping(volume.get("configMap")), CONFIGMAP, "name", "volume", path)
    yield from _keyed_source(mapping(volume.get("secret")), SECRET, "secretName", "volume", path)
    claim = mapping(volume.get("persistentVolumeClaim")).get("claimName")
    if isinstance(claim, str) and claim:
        yield Reference(PVC, claim, None, False, "volume", f"{path}.persistentVolumeClaim")
    sources = as_list(mapping(volume.get("projected")).get("sources"))
    for k, source in enumerate(sources):
        source_path = f"{path}.projected.sources[{k}]"
        for field, kind in (("configMap", CONFIGMAP), ("secret", SECRET)):
            body = mapping(mapping(source).get(field))
            yield from _keyed_source(body, kind, "name", "projected volume", source_path, field)


def _keyed_source(
    source: JSON, kind: str, name_field: str, via: str, path: str, field: str = ""
) -> Iterator[Reference]:
    """A configMap/secret volume source: the object itself, then each key in ``items``."""
    name = source.get(name_field)
    if not isinstance(name, str) or not name:
        return
    field = field or ("configMap" if kind == CONFIGMAP else "secret")
    optional = source.get("optional") is True
    yield Reference(kind, name, None, optional, via, f"{path}.{field}")
    for i, item in enumerate(as_list(source.get("items"))):
        key = mapping(item).get("key")
        if isinstance(key, str) and key:
            yield Reference(kind, name, key, optional, via, f"{path}.{field}.items[{i}]")


def _service_account(spec: JSON, base: str) -> Reference:
    for field in ("serviceAccountName", "serviceAccount"):
        name = spec.get(field)
        if isinstance(name, str) and name:
            implicit = name == "default"  # every namespace has it
            return Reference(SERVICE_ACCOUNT, name, None, implicit, field, f"{base}.{field}")
    # Unset means the namespace's implicit ``default`` account, which always exists.
    return Reference(SERVICE_ACCOUNT, "default", None, True, "serviceAccountName", base)
