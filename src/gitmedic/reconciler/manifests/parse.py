"""Fast, strict parsing of manifest text into objects that remember file and line.

Read-only detection must not pay for round-trip parsing, so this path uses
libyaml (PyYAML's CSafeLoader) and only adds what Kubernetes tooling needs on
top: duplicate keys are errors (the API server would reject them; YAML 1.1
parsers silently keep the last), documents must be objects with apiVersion,
kind and metadata.name, ``kind: List`` is expanded, and alias expansion is
bounded so a "billion laughs" document fails fast instead of exhausting memory.
Round-trip editing lives in ``edit.py`` with ruamel.yaml.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_ALIAS_EXPANSION = 100_000
NOT_AN_OBJECT = "object has no apiVersion and no kind"
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s,\[\]{}]")


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
    # Documents that are mappings but not Kubernetes objects (no apiVersion nor kind).
    foreign_documents: int = 0


class _StrictLoader(yaml.CSafeLoader):
    """CSafeLoader that refuses duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen and key_node.tag != "tag:yaml.org,2002:merge":
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


def parse_text(text: str, file: str) -> ParsedFile:
    """Parse one file's text. Errors are collected; a file with a syntax error yields no objects."""
    out = ParsedFile()
    if len(text) > MAX_FILE_BYTES:
        out.errors.append(ManifestError(file, 0, f"file is larger than {MAX_FILE_BYTES} bytes"))
        return out
    if file.endswith(".json") and text.lstrip().startswith(("{", "[")):
        return _parse_json(text, file)
    if "\t" in text:
        tab_error = _tab_error(text, file)
        if tab_error:
            out.errors.append(tab_error)
            return out
    check_aliases = _ANCHOR.search(text) is not None
    loader = _StrictLoader(text)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            assert node is not None  # check_node() said there is one
            if check_aliases:
                _check_expansion(node)
            data = loader.construct_document(node)
            _add_document(out, data, file, node.start_mark.line + 1, index)
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = exc.problem or exc.context or "invalid YAML"
        if "'\\t'" in problem:
            problem = "tab character where YAML allows only spaces"
        out.objects.clear()
        out.errors.append(ManifestError(file, line, f"invalid YAML: {problem}"))
    except _ExpansionError as exc:
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
    if "\t" in text:
        tab_error = _tab_error(text, file)
        if tab_error:
            raise ValueError(str(tab_error))
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_expansion(node)
        return loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise ValueError(str(ManifestError(file, line, f"invalid YAML: {exc.problem}"))) from None
    except _ExpansionError as exc:
        raise ValueError(str(ManifestError(file, exc.line, str(exc)))) from None
    finally:
        loader.dispose()


def _tab_error(text: str, file: str) -> ManifestError | None:
    """libyaml tolerates some tabs that the round-trip editor (and kubectl's YAML 1.1
    readers) reject; such a file could be read but never fixed, so it is an error here.
    Only files holding a tab pay for this second, pure-Python scan."""
    try:
        for _ in yaml.scan(text, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as exc:
        if exc.problem and "'\\t'" in exc.problem and exc.problem_mark is not None:
            line = exc.problem_mark.line + 1
            return ManifestError(
                file, line, "invalid YAML: tab character where YAML allows only spaces"
            )
    return None


def _parse_json(text: str, file: str) -> ParsedFile:
    out = ParsedFile()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        out.errors.append(ManifestError(file, exc.lineno, f"invalid JSON: {exc.msg}"))
        return out
    _add_document(out, data, file, 1, 0)
    return out


def _add_document(out: ParsedFile, data: Any, file: str, line: int, index: int) -> None:
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
    if data.get("kind") == "List" and isinstance(data.get("items"), list):
        for item in data["items"]:
            _add_document(out, item, file, line, index)
        return
    problem = object_problem(data)
    if problem:
        out.errors.append(ManifestError(file, line, problem))
        return
    out.objects.append(ParsedObject(dict(data), line, index))


def object_problem(data: Mapping[str, Any]) -> str:
    """Why ``data`` is not a Kubernetes object we can index, or ''."""
    for key in ("apiVersion", "kind"):
        if not isinstance(data.get(key), str) or not data.get(key):
            return f"object has no {key}"
    meta = data.get("metadata")
    if not isinstance(meta, Mapping):
        return f"{data['kind']} has no metadata"
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        return f"{data['kind']} has no metadata.name"
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        return f"{data['kind']} {meta['name']}: metadata.namespace is not a string"
    return ""


class _ExpansionError(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(
            f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (alias bomb?)"
        )
        self.line = line


def _check_expansion(root: yaml.Node) -> None:
    """Refuse documents whose aliases would expand past the bound (memoised by node)."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # cycles count once
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(n) for n in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > MAX_ALIAS_EXPANSION:
            raise _ExpansionError(node.start_mark.line + 1)
        sizes[id(node)] = total
        return total

    size(root)


def _type(data: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(data), type(data).__name__
    )
