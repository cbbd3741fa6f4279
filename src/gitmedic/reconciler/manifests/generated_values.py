"""A Flux ``valuesFrom`` ConfigMap that kustomize generates beside the HelmRelease.

Flux repositories keep large values (dashboards, exporter configs) as plain files and
let the folder's ``kustomization.yaml`` turn them into a ConfigMap with a
``configMapGenerator``; the HelmRelease names that ConfigMap in ``valuesFrom``. The
values are then the generator's file itself, read as a values file.

kustomize names the generated object ``<name>-<hash>`` unless
``disableNameSuffixHash`` is set (on the generator's ``options`` or in
``generatorOptions``); a reference to ``<name>`` is rewritten to the hashed name by a
``nameReference`` configuration (as Flux documents for ``spec/valuesFrom/name``), so
both spellings name the generated ConfigMap. A key is a file's base name, or the
``key=`` before its path. Values in a ``literals`` entry or an env file are YAML in a
string that gitmedic does not read: refused with the reason, never skipped.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

__all__ = ["GeneratedValuesError", "generated_values"]

# kustomize's name suffix: ten characters of its hash alphabet (lower-case letters, digits)
_HASH_SUFFIX = re.compile(r"-[a-z0-9]{10}")


class GeneratedValuesError(ValueError):
    """The generated ConfigMap is found but its values cannot be read from a file."""


def generated_values(kustomization: dict[str, Any], name: str, key: str) -> str | None:
    """The path (relative to the kustomization's folder) of the file a
    ``configMapGenerator`` of ``kustomization`` turns into ConfigMap ``name``'s ``key``;
    None when no generator makes a ConfigMap of that name."""
    hashed = not _option(kustomization.get("generatorOptions"))
    for generator in _entries(kustomization.get("configMapGenerator")):
        base = str(generator.get("name") or "")
        suffix = hashed and not _option(generator.get("options"))
        if base and _names(base, name, suffixed=suffix):
            return _file_of(generator, base, key)
    return None


def _names(base: str, name: str, *, suffixed: bool) -> bool:
    """Whether ``name`` is the generated ConfigMap's name as a reference may spell it."""
    if name == base:
        return True
    return suffixed and name.startswith(base) and bool(_HASH_SUFFIX.fullmatch(name[len(base) :]))


def _file_of(generator: dict[str, Any], base: str, key: str) -> str:
    for entry in generator.get("files") or []:
        given, _, path = str(entry).rpartition("=")
        if (given or PurePosixPath(path).name) == key:
            return path
    if any(str(e).partition("=")[0] == key for e in generator.get("literals") or []):
        raise GeneratedValuesError(
            f"ConfigMap {base} is generated with {key} as a literal: values in a literal "
            "are not read; generate it from a file (files: [{key}=<path>])"
        )
    keys = [
        str(e).rpartition("=")[0] or PurePosixPath(str(e)).name
        for e in generator.get("files") or []
    ]
    raise GeneratedValuesError(
        f"ConfigMap {base} is generated without a key {key} "
        f"(its files give {', '.join(keys) or 'no key'}; env files and literals are not read)"
    )


def _option(options: Any) -> bool:
    return isinstance(options, dict) and options.get("disableNameSuffixHash") is True


def _entries(value: Any) -> list[dict[str, Any]]:
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []
