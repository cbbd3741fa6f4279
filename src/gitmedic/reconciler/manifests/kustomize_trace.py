"""Which file of a kustomization sets what: resources for objects, patches for fields.

kustomize output carries no positions, so the kustomization is walked as
kustomize does: ``resources`` (files, and folders with their own
kustomization, recursively, such as an overlay's ``../../bases/frontend``)
declare objects; ``patches`` (files, by ``path``) and
``patchesStrategicMerge`` change fields. An object's source is the resource
document that declares it; each leaf a patch sets is a field origin at the
patch's line, and a patch of an outer overlay overrides one of an inner
kustomization, as it does when kustomize builds. A fix to such a field belongs
in that patch; one to any other field, in the resource file.

Items of a list a strategic-merge patch merges by ``name`` (containers, env,
ports) are matched by that name, so the origin's path uses the rendered index.

``namePrefix`` and ``nameSuffix`` rename what a kustomization renders (its
resources, and every nested kustomization's): two environments in one
namespace stay apart as ``dev-frontend`` and ``staging-frontend``. Each
declared object and each patch is keyed by the name it renders as (a patch
names an object as it is before its own kustomization's affixes), and also by
the name it is declared with, for the kinds kustomize does not rename (a
Namespace). A patch's origins name the object as the patch declares it, so a
fix is addressed to the patch's document, not to the rendered name.
Generators and transformers are not traced: what they produce points at the
kustomization file, and the responder escalates instead of editing it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.origin import FieldOrigin
from gitmedic.detectors.snapshot import Source
from gitmedic.reconciler.manifests.parse import object_name, parse_text
from gitmedic.reconciler.manifests.paths import format_path
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree
from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader

Identity = tuple[str, str]  # (kind, name)
# the (namePrefix, nameSuffix) of each kustomization from the one declaring an object out
Affixes = tuple[tuple[str, str], ...]
_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_IDENTITY_KEYS = {"apiVersion", "kind"}


@dataclass
class Traced:
    sources: dict[Identity, Source] = field(default_factory=dict)
    # per object, as it renders: the leaves its patches set, outer last
    patched: dict[Identity, list[PatchLeaf]] = field(default_factory=dict)


@dataclass(frozen=True)
class PatchLeaf:
    path: tuple[Any, ...]  # list items a strategic merge matches by name as ("name", value)
    file: str
    line: int
    holder: Resource | None = None  # the patch's object, when it names it otherwise


def trace(tree: Tree, root: str) -> Traced:
    out = Traced()
    _walk(tree, root, out, seen=set(), outer=())
    return out


def _walk(tree: Tree, folder: str, out: Traced, seen: set[str], outer: Affixes) -> None:
    kfile = next((_join(folder, n) for n in _NAMES if tree.is_file(_join(folder, n))), None)
    if kfile is None or kfile in seen:
        return
    seen.add(kfile)
    spec = _read(tree, kfile)
    affixes = ((_text(spec.get("namePrefix")), _text(spec.get("nameSuffix"))), *outer)
    for entry in _strings(spec.get("resources")) + _strings(spec.get("bases")):
        target = _join(folder, entry)
        if tree.is_file(target):
            _declare(tree, target, out, affixes)
        else:
            _walk(tree, target, out, seen, affixes)
    patches = [p.get("path") for p in _maps(spec.get("patches"))]
    patches += _strings(spec.get("patchesStrategicMerge"))
    for patch in patches:
        if isinstance(patch, str) and tree.is_file(_join(folder, patch)):
            _patch(tree, _join(folder, patch), out, affixes)


def _declare(tree: Tree, file: str, out: Traced, affixes: Affixes) -> None:
    for body, line, document in _documents(tree, file):
        for ident in _rendered_as(_identity(body), affixes):
            out.sources.setdefault(ident, Source(file, line, document))


def _rendered_as(ident: Identity, affixes: Affixes) -> list[Identity]:
    """The names an object renders as: with every affix, then as declared (kinds that
    kustomize does not rename)."""
    kind, name = ident
    for prefix, suffix in affixes:
        name = f"{prefix}{name}{suffix}"
    return list(dict.fromkeys([(kind, name), ident]))


def _patch(tree: Tree, file: str, out: Traced, affixes: Affixes) -> None:
    try:
        text = tree.read_text(file)
        nodes = list(yaml.compose_all(text, Loader=ValueAsStrLoader))
    except (LoadFailure, yaml.YAMLError):
        return
    for node in nodes:
        if not isinstance(node, yaml.MappingNode):
            continue
        body = yaml.load(yaml.serialize(node), Loader=ValueAsStrLoader)
        if not isinstance(body, dict) or "kind" not in body:
            continue
        declared = _identity(body)
        for ident in _rendered_as(declared, affixes):
            holder = None if ident == declared else _resource(body)
            leaves = out.patched.setdefault(ident, [])
            leaves.extend(PatchLeaf(p, file, n, holder) for p, n in _leaf_lines(node, ()))


def _leaf_lines(node: yaml.Node, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], int]]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not path and (key.value in _IDENTITY_KEYS or key.value == "metadata"):
                if key.value == "metadata":
                    yield from _metadata(value)
                continue
            if isinstance(value, yaml.MappingNode | yaml.SequenceNode) and value.value:
                yield from _leaf_lines(value, (*path, str(key.value)))
            else:
                yield (*path, str(key.value)), key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _leaf_lines(item, (*path, _item_key(item, i)))


def _metadata(node: yaml.Node) -> Iterator[tuple[tuple[Any, ...], int]]:
    for path, line in _leaf_lines(node, ("metadata",)):
        if path[1:] not in (("name",), ("namespace",)):
            yield path, line


def _item_key(item: yaml.Node, index: int) -> Any:
    """A list item a strategic merge matches by name is named, else kept by position."""
    if isinstance(item, yaml.MappingNode):
        for key, value in item.value:
            if key.value == "name" and isinstance(value, yaml.ScalarNode):
                return ("name", value.value)
    return index


def origins_for(body: Any, patched: list[PatchLeaf]) -> tuple[FieldOrigin, ...]:
    """The patch leaves as field origins on the rendered ``body`` (names to indexes)."""
    by_path: dict[str, FieldOrigin] = {}
    for leaf in patched:
        concrete = _concrete(body, leaf.path)
        if concrete is not None:
            text = format_path(concrete)
            # later (outer) patches win
            by_path[text] = FieldOrigin(text, leaf.file, leaf.line, text, holder=leaf.holder)
    return tuple(by_path.values())


def _concrete(body: Any, path: tuple[Any, ...]) -> tuple[str | int, ...] | None:
    out: list[str | int] = []
    node = body
    for seg in path:
        if isinstance(seg, tuple):
            items = node if isinstance(node, list) else []
            names = [i.get("name") if isinstance(i, dict) else None for i in items]
            if seg[1] not in names:
                return None
            seg = names.index(seg[1])
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return None
        elif not isinstance(node, dict) or seg not in node:
            return None
        out.append(seg)
        node = node[seg]
    return tuple(out)


def _documents(tree: Tree, file: str) -> list[tuple[dict[str, Any], int, int]]:
    try:
        parsed = parse_text(tree.read_text(file), file)
    except LoadFailure:
        return []
    return [(p.body, p.line, p.document) for p in parsed.objects]


def _read(tree: Tree, file: str) -> dict[str, Any]:
    try:
        data = yaml.load(tree.read_text(file), Loader=ValueAsStrLoader)
    except (LoadFailure, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _identity(body: dict[str, Any]) -> Identity:
    meta = body.get("metadata")
    return str(body.get("kind")), object_name(meta) if isinstance(meta, dict) else "None"


def _resource(body: dict[str, Any]) -> Resource:
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    kind, name = _identity(body)
    return Resource(kind, str(meta.get("namespace") or ""), name, str(body.get("apiVersion")))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _maps(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _join(folder: str, rel: str) -> str:
    parts: list[str] = []
    for part in PurePosixPath(folder, rel).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)
