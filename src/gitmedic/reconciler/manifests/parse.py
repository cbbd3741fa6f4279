"""Fast, strict parsing of manifest text into objects that remember file and line.

Read-only detection must not pay for round-trip parsing, so this path uses
libyaml (PyYAML's CSafeLoader) and only adds what Kubernetes tooling needs on
top: documents must be objects with apiVersion, kind and metadata.name (or a
``generateName``: an Argo CD hook Job is named when it is created), and every list
kind (``kind: List``, and ``ConfigMapList``, ``RoleBindingList``... any ``<Kind>List``
holding ``items``, as ``kubectl get -o yaml`` writes them) is expanded, each item an
object at its own line. The loader itself
(``yaml_loader.py``) refuses duplicate keys and alias bombs and is faster than
stock CSafeLoader. Oversized files are refused before parsing.
Round-trip editing lives in ``edit.py`` with ruamel.yaml.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import Node

from gitmedic.reconciler.manifests.yaml_loader import ExpansionError, StrictLoader, has_anchors

MAX_FILE_BYTES = 20 * 1024 * 1024
NOT_AN_OBJECT = "object has no apiVersion and no kind"


@dataclass(frozen=True)
class ManifestError:
    """A problem in an input file, located as precisely as the parser allows."""

    file: str
    line: int  # 1-based; 0 when the whole file is at fault
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class ParsedObject:
    body: dict[str, Any]
    line: int
    document: int


@dataclass
class ParsedFile:
    objects: list[ParsedObject] = field(default_factory=list)
    errors: list[ManifestError] = field(default_factory=list)
    # Mappings that are not Kubernetes objects (neither apiVersion nor kind); each also
    # has its error in ``errors``. Lists and scalars are always errors: a manifest
    # folder holds objects, and a list of objects is written as ``kind: List``.
    foreign_documents: int = 0

    @property
    def foreign(self) -> bool:
        """Nothing here is (or is trying to be) a Kubernetes object: some other YAML file."""
        return not self.objects and 0 < self.foreign_documents == len(self.errors)


def parse_text(text: str, file: str) -> ParsedFile:
    """Parse one file's text. Errors are collected; a file with a syntax error yields no objects."""
    out = ParsedFile()
    if len(text) > MAX_FILE_BYTES:
        out.errors.append(ManifestError(file, 0, f"file is larger than {MAX_FILE_BYTES} bytes"))
        return out
    if file.endswith(".json") and text.lstrip().startswith(("{", "[")):
        return _parse_json(text, file)
    anchors = has_anchors(text)
    loader = StrictLoader(text)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            assert node is not None  # check_node() said there is one
            data = loader.build(node, anchors=anchors)
            _add_document(out, data, file, node.start_mark.line + 1, index, node)
            index += 1
    except yaml.MarkedYAMLError as exc:
        out.objects.clear()
        out.errors.append(_yaml_error(exc, text, file))
    except ExpansionError as exc:
        out.objects.clear()
        out.errors.append(ManifestError(file, exc.line, str(exc)))
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        out.objects.clear()
        out.errors.append(ManifestError(file, 0, f"invalid YAML: {exc}"))
    finally:
        loader.dispose()
    return out


def load_strict_yaml(text: str, file: str) -> Any:
    """One YAML document (a config file) with the same strictness as manifests.

    Raises ValueError naming the file and line on any problem.
    """
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        return loader.build(node, anchors=has_anchors(text)) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        raise ValueError(str(_yaml_error(exc, text, file))) from None
    except ExpansionError as exc:
        raise ValueError(str(ManifestError(file, exc.line, str(exc)))) from None
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.MarkedYAMLError, text: str, file: str) -> ManifestError:
    """libyaml's syntax error at its line, said plainly when a tab is what it stopped at.

    Tabs libyaml reads (after a value, before a comment, inside flow collections, in a
    plain scalar's continuation past its indentation) never get here: kubectl and
    kustomize read them too. What libyaml refuses is a tab used as indentation, and its
    own words for that ("found character that cannot start any token") do not say so.
    """
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else 0
    problem = exc.problem or exc.context or "invalid YAML"
    if mark is not None and _is_tab_at(text, mark.line, mark.column):
        problem = "tab character where YAML allows only spaces (a tab used as indentation)"
    return ManifestError(file, line, f"invalid YAML: {problem}")


def _is_tab_at(text: str, line: int, column: int) -> bool:
    """Whether the character at 0-based ``line`` and ``column`` of ``text`` is a tab."""
    start = 0
    for _ in range(line):
        start = text.find("\n", start) + 1
        if start == 0:
            return False
    return text[start + column : start + column + 1] == "\t"


def _parse_json(text: str, file: str) -> ParsedFile:
    out = ParsedFile()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        out.errors.append(ManifestError(file, exc.lineno, f"invalid JSON: {exc.msg}"))
        return out
    _add_document(out, data, file, 1, 0)
    return out


def _add_document(
    out: ParsedFile, data: Any, file: str, line: int, index: int, node: Node | None = None
) -> None:
    if data is None:
        return  # an empty document (`---` alone, or comments only)
    if not isinstance(data, Mapping):
        out.errors.append(
            ManifestError(file, line, f"document {index + 1} is a {_type(data)}, not an object")
        )
        return
    if "apiVersion" not in data and "kind" not in data:
        out.foreign_documents += 1
        out.errors.append(ManifestError(file, line, NOT_AN_OBJECT))
        return
    if is_list_kind(data):
        items = data["items"]
        lines = _item_lines(node, len(items)) or [line] * len(items)
        for item, item_line in zip(items, lines, strict=True):
            _add_document(out, item, file, item_line, index)
        return
    problem = object_problem(data)
    if problem:
        out.errors.append(ManifestError(file, line, problem))
        return
    out.objects.append(ParsedObject(dict(data), line, index))


def is_list_kind(data: Mapping[str, Any]) -> bool:
    """``kind: List`` or ``<Kind>List`` with an ``items`` list: a list of objects, not one."""
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list)


def object_name(meta: Mapping[str, Any]) -> str:
    """``metadata.name``, else the ``generateName`` prefix the API server completes."""
    name = meta.get("name")
    if isinstance(name, str) and name:
        return name
    prefix = meta.get("generateName")
    return prefix if isinstance(prefix, str) else ""


def _item_lines(node: Node | None, count: int) -> list[int]:
    """The line of each item of a ``kind: List`` document (empty when unknown, as in JSON)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if (
                key.value == "items"
                and isinstance(value, yaml.SequenceNode)
                and len(value.value) == count
            ):
                return [item.start_mark.line + 1 for item in value.value]
    return []


def object_problem(data: Mapping[str, Any]) -> str:
    """Why ``data`` is not a Kubernetes object we can index, or ''."""
    for key in ("apiVersion", "kind"):
        if not isinstance(data.get(key), str) or not data.get(key):
            return f"object has no {key}"
    meta = data.get("metadata")
    if not isinstance(meta, Mapping):
        return f"{data['kind']} has no metadata"
    if not object_name(meta):
        return f"{data['kind']} has no metadata.name (nor metadata.generateName)"
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        return f"{data['kind']} {object_name(meta)}: metadata.namespace is not a string"
    return ""


def _type(data: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(data), type(data).__name__
    )
