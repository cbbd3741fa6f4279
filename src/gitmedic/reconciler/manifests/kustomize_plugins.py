"""The paths inside kustomize plugin configs: what a ``generators:``, ``transformers:``
or ``validators:`` entry makes kustomize read.

An entry is a file (or a kustomization folder) of plugin configs, or the config
itself written inline as a YAML string. Kustomize's built-in plugins read files
named in their configs (``PatchTransformer.path``, ``PatchStrategicMergeTransformer
.paths``, a ``ConfigMapGenerator``'s ``files``/``envs``, a ``HelmChartInflation
Generator``'s ``valuesFile``/``chartHome``/``repo``, ``ReplacementTransformer
.replacements[].path``), and its file loader fetches a URL as readily as a file.
So every value under one of those keys of a config (or of its replacements) is
a reference to check. Plugins that are not built in never run (gitmedic does not
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
    """Every reference in one parsed plugin config, or in a list of them (``helmCharts``).

    Only a config's own keys are read, and ``replacements[].path``: deeper down a
    ``path`` is a field path (``fieldSpecs: [{path: metadata/labels}]``), not a file."""
    for config in node if isinstance(node, list) else [node]:
        if not isinstance(config, dict):
            continue
        for key, value in config.items():
            if key in _PATH_KEYS or key in _REMOTE_KEYS:
                yield from _paths(value)
        for replacement in config.get("replacements") or []:
            if isinstance(replacement, dict) and "path" in replacement:
                yield from _paths(replacement["path"])


def _paths(value: Any) -> Iterator[str]:
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and item:
            yield item.split("=", 1)[-1] if "=" in item and "://" not in item else item
