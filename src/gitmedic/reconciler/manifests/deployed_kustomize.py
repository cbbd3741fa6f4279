"""A Flux HelmRelease as a kustomize overlay makes it: a base release, patched per environment.

Flux monorepos (fluxcd/flux2-kustomize-helm-example) declare one HelmRelease in
``apps/base/<app>`` and give each environment an overlay whose patch changes
its ``spec.values``. ``deployed_by: {file: apps/staging}`` (the overlay's folder
or its ``kustomization.yaml``) names such a release: the overlay's resources
are walked for the HelmRelease, and its strategic-merge patches of it (in
``patches`` or ``patchesStrategicMerge``) are laid over it in kustomize's order.
A HelmRelease has no merge keys, so maps merge key by key and a list is
replaced, which is also how helm layers values: each file's ``spec.values`` is
one values layer, the base's first, so a value is located, and fixed, in the
file that sets it last.

Only what can be read without running kustomize is read: JSON 6902 patches,
inline patches and components are refused by name; remote bases are refused
as everywhere in gitmedic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from gitmedic.reconciler.manifests.yaml_loader import safe_load_all_c, safe_load_c

__all__ = ["KustomizedRelease", "is_kustomization", "kustomized_release"]

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
Reader = Callable[[str], str]


class KustomizeReadError(Exception):
    """The overlay cannot be read as gitmedic reads it; the message says why."""


@dataclass
class KustomizedRelease:
    body: dict[str, Any]  # the release as the overlay renders it
    file: str  # the file declaring it (the base)
    layers: list[tuple[str, str]] = field(default_factory=list)  # (file, namespace) with values


def is_kustomization(file: str) -> bool:
    name = PurePosixPath(file).name
    return name in KUSTOMIZATIONS or not name.endswith((".yaml", ".yml", ".json"))


def kustomized_release(read: Reader, file: str, name: str) -> KustomizedRelease:
    folder = file if PurePosixPath(file).name not in KUSTOMIZATIONS else _parent(file)
    found = _walk(read, folder, name, depth=0)
    if found is None:
        what = f" named {name!r}" if name else ""
        raise KustomizeReadError(f"{folder}: the overlay renders no Flux HelmRelease{what}")
    return found


def _walk(read: Reader, folder: str, name: str, depth: int) -> KustomizedRelease | None:
    if depth > 20:
        raise KustomizeReadError(f"{folder}: kustomizations nested too deep")
    spec = _kustomization(read, folder)
    if spec.get("components"):
        raise KustomizeReadError(f"{folder}: kustomize components are not read")
    found: KustomizedRelease | None = None
    for resource in spec.get("resources") or []:
        rel = _join(folder, str(resource))
        child = (
            _walk(read, rel, name, depth + 1)
            if is_kustomization(rel)
            else _declared(read, rel, name)
        )
        if child is not None:
            if found is not None:
                raise KustomizeReadError(
                    f"{folder}: more than one HelmRelease; say which with name"
                )
            found = child
    if found is None:
        return None
    for patch in _patches(spec, folder):
        _apply(read, found, patch)
    namespace = spec.get("namespace")
    if isinstance(namespace, str) and namespace:
        found.body["metadata"] = {**_map(found.body.get("metadata")), "namespace": namespace}
    return found


def _kustomization(read: Reader, folder: str) -> dict[str, Any]:
    for name in KUSTOMIZATIONS:
        try:
            text = read(_join(folder, name))
        except OSError:
            continue
        return _map(safe_load_c(text))
    raise KustomizeReadError(f"{folder}: no kustomization.yaml")


def _declared(read: Reader, file: str, name: str) -> KustomizedRelease | None:
    for doc in _documents(read, file):
        if _is_release(doc) and (not name or _name(doc) == name):
            return KustomizedRelease(doc, file, _values_layer(file, doc))
    return None


def _patches(spec: dict[str, Any], folder: str) -> list[str]:
    files = [_join(folder, str(p)) for p in spec.get("patchesStrategicMerge") or []]
    for patch in spec.get("patches") or []:
        patch = _map(patch)
        if "patch" in patch or not patch.get("path"):
            raise KustomizeReadError(f"{folder}: an inline patch is not read; put it in a file")
        files.append(_join(folder, str(patch["path"])))
    if spec.get("patchesJson6902"):
        raise KustomizeReadError(f"{folder}: JSON 6902 patches are not read")
    return files


def _apply(read: Reader, release: KustomizedRelease, file: str) -> None:
    docs = _documents(read, file)
    if any(not d.get("kind") for d in docs):
        raise KustomizeReadError(f"{file}: a JSON 6902 patch is not read")
    for doc in docs:
        if _is_release(doc) and _name(doc) in ("", _name(release.body)):
            release.body = _merge(release.body, doc)
            release.layers += _values_layer(file, doc)


def _values_layer(file: str, doc: dict[str, Any]) -> list[tuple[str, str]]:
    if "values" not in _map(doc.get("spec")):
        return []
    return [(file, str(_map(doc.get("metadata")).get("namespace") or ""))]


def _documents(read: Reader, file: str) -> list[dict[str, Any]]:
    try:
        return [d for d in safe_load_all_c(read(file)) if isinstance(d, dict)]
    except OSError as exc:
        raise KustomizeReadError(f"{file}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise KustomizeReadError(f"{file}: {exc}") from None


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _is_release(doc: dict[str, Any]) -> bool:
    group = str(doc.get("apiVersion", "")).split("/")[0]
    return (group, doc.get("kind")) == ("helm.toolkit.fluxcd.io", "HelmRelease")


def _join(folder: str, rel: str) -> str:
    if "://" in rel or rel.startswith(("github.com/", "git@")):
        raise KustomizeReadError(f"{folder}: remote resource {rel} is not read")
    parts: list[str] = []
    for part in PurePosixPath(folder, rel).parts:
        if part == "..":
            if not parts:
                raise KustomizeReadError(f"{folder}: {rel} is outside the repository")
            parts.pop()
        elif part not in (".", "/"):
            parts.append(part)
    return "/".join(parts)


def _parent(file: str) -> str:
    return str(PurePosixPath(file).parent)


def _name(doc: dict[str, Any]) -> str:
    return str(_map(doc.get("metadata")).get("name") or "")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
