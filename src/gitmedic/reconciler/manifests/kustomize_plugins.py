"""The paths inside kustomize plugin configs: what a ``generators:``, ``transformers:``
or ``validators:`` entry makes kustomize read.

An entry is a file (or a kustomization folder) of plugin configs, or the config
itself written inline as a YAML string. Kustomize's built-in plugins read files
named in their configs (``PatchTransformer.path``, ``PatchStrategicMergeTransformer
.paths``, a ``ConfigMapGenerator``'s ``files``/``envs``, a ``HelmChartInflation
Generator``'s ``valuesFile``/``chartHome``/``repo``, ``ReplacementTransformer
.replacements[].path``), and its file loader fetches a URL as readily as a file.
So every value under one of those keys, at any depth of any document, is a
reference to check. Plugins that are not built in never run (gitmedic does not
pass ``--enable-alpha-plugins``), and the renderer's environment
(:mod:`.render_sandbox`) leaves a missed field no way out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader

__all__ = ["PLUGIN_FIELDS", "config_references", "plugin_references"]

PLUGIN_FIELDS = ("generators", "transformers", "validators")
# The keys of built-in plugin configs whose values are files or folders kustomize reads.
_PATH_KEYS = frozenset(
    {"path", "paths", "files", "envs", "env", "valuesFile", "additionalValuesFiles", "chartHome"}
)
_REMOTE_KEYS = frozenset({"repo"})  # a Helm chart repository


def plugin_references(text: str) -> Iterator[str]:
    """Every reference in the plugin configs of ``text`` (one or more YAML documents);
    nothing for text that is not YAML (kustomize refuses it and names it)."""
    try:
        documents = list(yaml.load_all(text, Loader=ValueAsStrLoader))
    except yaml.YAMLError:
        return
    for document in documents:
        yield from config_references(document)


def config_references(node: Any) -> Iterator[str]:
    """Every reference in one parsed plugin config (or any YAML value)."""
    pending = [node]  # a stack, not recursion: a hostile config may nest deep
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key in _PATH_KEYS or key in _REMOTE_KEYS:
                    yield from _paths(value)
                else:
                    pending.append(value)
        elif isinstance(current, list):
            pending.extend(current)


def _paths(value: Any) -> Iterator[str]:
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item:
            yield item.split("=", 1)[-1] if "=" in item and "://" not in item else item
        elif isinstance(item, dict | list):
            yield from config_references(item)
