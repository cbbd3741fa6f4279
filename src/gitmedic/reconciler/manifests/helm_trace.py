"""Which values key feeds which rendered field: one marked render, then a walk.

Tracing ``{{ .Values.x }}`` through templates would mean re-implementing Go
templates (``include``, ``toYaml``, ``default``, ``with`` blocks). Instead the
merged values are rendered a second time with every non-empty string leaf
replaced by a unique marker (``gmv12z``) and every non-zero integer leaf by a
unique large number; a rendered field holding a marker (or a marked number)
is fed by that key. Booleans, floats, empty strings and zero are left as they
are: they steer ``if`` blocks and defaults, and changing them would render a
different structure. The cost is one extra ``helm template`` per chart, which
``detect`` runs only when a finding first reads an object's origins
(:func:`~.helm_render.origins_on_demand`); a chart whose templates reject the
markers (a values schema, a ``required`` format check) still renders, only
without field origins.

Each key's line is that of its key in the last values file (in helm's order)
that sets it, which is the line a fix edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.origin import FieldOrigin
from gitmedic.reconciler.config import ValuesSource
from gitmedic.reconciler.manifests.helm_parameters import read_parameters
from gitmedic.reconciler.manifests.paths import format_path
from gitmedic.reconciler.manifests.yaml_loader import safe_node_and_data

Key = tuple[str, ...]
_MARK = re.compile(r"gmv(\d+)z")
# helm reads numbers as float64 and prints 1e6 and above in exponent form: marked
# integers stay below it, in a band real values rarely use
_INT_BASE = 917_000
_INT_MARK = re.compile(r"(?<![\d.])(9[1-9]\d{4})(?![\d.])")


@dataclass(frozen=True)
class ValuesLayer:
    file: str  # repo-relative
    data: Any
    lines: dict[Key, int]  # leaf key path -> 1-based line of its key
    source: ValuesSource | None = None  # values held in a manifest, not a values file
    parameters: Mapping[Key, str] = field(default_factory=dict)  # key -> its --set name


def read_layer(file: str, text: str) -> ValuesLayer:
    node, data = safe_node_and_data(text)
    lines: dict[Key, int] = {}
    if isinstance(node, yaml.MappingNode):
        _key_lines(node, (), lines)
    return ValuesLayer(file, data if isinstance(data, dict) else {}, lines)


def read_source_layer(text: str, source: ValuesSource) -> ValuesLayer:
    """The values ``source`` names inside its manifest file (``text``), with their lines."""
    if not source.prefix:  # the file a kustomize configMapGenerator makes the ConfigMap of:
        return read_layer(source.file, text)  # a values file, edited as one
    node = _object_node(text, source)
    for key in source.prefix:
        node = _child(node, key)
    if node is None:
        return ValuesLayer(source.file, {}, {}, source)
    if source.parameters:
        given = read_parameters(node)
        return ValuesLayer(source.file, given.values, given.lines, source, given.names)
    lines: dict[Key, int] = {}
    if isinstance(node, yaml.MappingNode):
        _key_lines(node, (), lines)
        data = yaml.safe_load(yaml.serialize(node))
    else:  # a YAML string (a ConfigMap key): its lines start below the key
        inner = read_layer(source.file, str(yaml.safe_load(yaml.serialize(node)) or ""))
        block = isinstance(node, yaml.ScalarNode) and node.style in ("|", ">")
        first = node.start_mark.line + (1 if block else 0)
        lines = {k: first + n for k, n in inner.lines.items()}
        data = inner.data
    return ValuesLayer(source.file, data if isinstance(data, dict) else {}, lines, source)


def _object_node(text: str, source: ValuesSource) -> yaml.Node | None:
    for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
        if _child(doc, "kind") is None:
            continue
        kind = yaml.safe_load(yaml.serialize(_child(doc, "kind")))
        name = _child(_child(doc, "metadata"), "name")
        if kind == source.kind and name is not None and name.value == source.name:
            return doc
    return None


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            if key_node.value == key:
                found: yaml.Node = value
                return found
    return None


def _key_lines(node: yaml.MappingNode, prefix: Key, out: dict[Key, int]) -> None:
    for key_node, value in node.value:
        key = (*prefix, str(key_node.value))
        if isinstance(value, yaml.MappingNode) and value.value:
            _key_lines(value, key, out)
        else:
            out[key] = key_node.start_mark.line + 1


def merge(layers: list[ValuesLayer]) -> dict[str, Any]:
    """helm's coalescing: maps merge key by key, anything else is replaced by the later."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _merge(merged, layer.data)
    return merged


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def owners(layers: Sequence[ValuesLayer]) -> dict[Key, tuple[str, int]]:
    """For each leaf key, the (file, line) of the last layer that sets it."""
    return {key: (layer.file, layer.lines[key]) for key, layer in owning_layers(layers).items()}


def owning_layers(layers: Sequence[ValuesLayer]) -> dict[Key, ValuesLayer]:
    """For each leaf key, the last layer that sets it."""
    out: dict[Key, ValuesLayer] = {}
    for layer in layers:
        for key in layer.lines:
            for k in [k for k in out if k[: len(key)] == key or key[: len(k)] == k]:
                del out[k]  # a map replaced by a scalar, or the reverse: the later wins
            out[key] = layer
    return out


@dataclass
class Marked:
    values: dict[str, Any]
    keys: list[Key]  # marker number -> key path

    def keys_in(self, value: Any) -> list[Key]:
        if isinstance(value, bool):
            return []
        if isinstance(value, int) and _INT_BASE <= value < _INT_BASE + len(self.keys):
            return [self.keys[value - _INT_BASE]]
        text = str(value)
        found = [int(m) for m in _MARK.findall(text)]
        found += [int(m) - _INT_BASE for m in _INT_MARK.findall(text) if int(m) >= _INT_BASE]
        return [self.keys[i] for i in found if i < len(self.keys)]


def mark(values: dict[str, Any]) -> Marked:
    keys: list[Key] = []

    def walk(node: Any, key: Key) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*key, str(k))) for k, v in node.items()}
        if isinstance(node, bool) or not isinstance(node, str | int) or not node:
            return node
        if isinstance(node, int) and len(keys) >= 999_999 - _INT_BASE:
            return node  # out of markers: this key stays untraced
        keys.append(key)
        n = len(keys) - 1
        return f"gmv{n}z" if isinstance(node, str) else _INT_BASE + n

    return Marked(walk(values, ()), keys)


def field_origins(
    body: Any, marked: Marked, owner: Mapping[Key, ValuesLayer]
) -> tuple[FieldOrigin, ...]:
    """The origins of ``body``'s fields, ``owner`` being :func:`owning_layers`."""
    out = []
    for path, value in _leaves(body, ()):
        for key in marked.keys_in(value):
            layer = owner.get(key)
            if layer is not None:
                origin = FieldOrigin(
                    format_path(path), layer.file, layer.lines[key], ".".join(key), key
                )
                out.append(_held(origin, layer, key))
    return tuple(out)


def _held(origin: FieldOrigin, layer: ValuesLayer, key: Key) -> FieldOrigin:
    source = layer.source
    if source is None:
        return origin
    holder = Resource(source.kind, source.namespace, source.name)
    held = replace(origin, holder=holder, prefix=source.prefix, editable=source.editable)
    return replace(held, parameter=layer.parameters.get(key, ""))


def _leaves(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    else:
        yield path, node
