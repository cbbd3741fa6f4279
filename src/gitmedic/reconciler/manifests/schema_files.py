"""The Kubernetes JSON schemas bundled with kubernetes-validate, read as plain files.

Importing ``kubernetes_validate`` brings jsonschema, referencing, packaging and
importlib_resources (0.1-0.3 s of start-up, a quarter of a 10,000-object detect),
only to list a folder and open JSON files. So the package's folder is found with
``importlib.util.find_spec``, which imports nothing, and read here; jsonschema is
imported only when an object needs its exact words (see ``schema.py``).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

_VERSION = re.compile(r"^v(\d+(?:\.\d+)*)-")


def schema_root() -> Path | None:
    """``kubernetes_validate/kubernetes-json-schema``, or None when not installed (or its
    import is blocked, as ``sys.modules[name] = None`` does)."""
    if "kubernetes_validate" in sys.modules and sys.modules["kubernetes_validate"] is None:
        return None
    return _installed_root()


@functools.cache
def _installed_root() -> Path | None:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        root = Path(location) / "kubernetes-json-schema"
        if root.is_dir():
            return root
    return None


@functools.cache
def all_versions() -> tuple[str, ...]:
    """The bundled schema sets' full versions, oldest first ("1.30.0", ...)."""
    root = schema_root()
    if root is None:
        return ()
    found = {m[1] for p in root.iterdir() if (m := _VERSION.match(p.name))}
    return tuple(sorted(found, key=lambda v: tuple(int(n) for n in v.split("."))))


def major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def full_version(minor: str) -> str:
    """The newest bundled full version of a major.minor."""
    return [v for v in all_versions() if major_minor(v) == minor][-1]


def strict_folder(minor: str) -> Path:
    root = schema_root()
    assert root is not None  # callers check schemas_installed() first
    return root / f"v{full_version(minor)}-local-strict"


def kind_schema(minor: str, api_version: str, kind: str) -> Any:
    """The schema of one kind (None: the bundle has none, a custom resource)."""
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    name = f"{kind.lower()}-{group}.json"
    if "/" in name or "\0" in name or name.startswith("."):
        return None  # hostile input: never a path outside the folder
    try:
        return json.loads((strict_folder(minor) / name).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


@functools.cache
def definitions(minor: str) -> Any:
    return json.loads((strict_folder(minor) / "_definitions.json").read_text(encoding="utf-8"))
