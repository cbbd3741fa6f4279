"""The YAML loader behind read-only detection: libyaml, strict, and faster than stock.

libyaml (PyYAML's ``CSafeLoader``) scans, parses and composes nodes in C, but
two steps stay in Python and dominate a large file: resolving the implicit tag
of every plain scalar, and constructing Python values from the nodes through
PyYAML's generic, re-entrant constructor. Both are sped up here without
changing a single value:

- tag resolution depends only on a plain scalar's text (SafeLoader has no path
  resolvers), so it is memoised per loader: manifests repeat the same keys
  (``name``, ``image``, ``containerPort``) thousands of times;
- documents without anchors (nearly all manifests) are built by a direct
  recursive walk that handles exactly the plain cases (``str`` and the scalar
  tags of YAML 1.1, ``map`` and ``seq``). Anything else (a merge key ``<<``,
  ``!!set``/``!!omap``, an unknown tag, an unhashable key) makes the walk give
  up and the document is built again by PyYAML's own constructor, so unusual
  input gets PyYAML's exact values and errors.

A plain ``=`` is a string. PyYAML resolves it to YAML 1.1's ``value`` tag (the
default-value key of the old type repository), for which no loader has a
constructor, so one CRD enum of ``['!=', '=']`` made the whole file unreadable;
libyaml-based readers of manifests (kubectl, kustomize, Argo CD) read a string.

Documents with anchors always take PyYAML's constructor, after
:func:`check_expansion` has refused any whose aliases would expand past a
bound (a "billion laughs" document). Both paths refuse duplicate mapping keys:
the API server would reject them, and YAML 1.1 parsers silently keep the last.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_ALIAS_EXPANSION = 100_000
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"  # what PyYAML resolves a plain ``=`` to
# Scalar tags whose constructors return a value directly (no generator, no recursion).
_PLAIN_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "timestamp", "binary")
)
# An anchor (``&name``) where YAML allows one: at the start of a node.
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s,\[\]{}]", re.MULTILINE)


class ExpansionError(Exception):
    """A document whose aliases expand past :data:`MAX_ALIAS_EXPANSION` nodes."""

    def __init__(self, line: int) -> None:
        super().__init__(
            f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (alias bomb?)"
        )
        self.line = line


# PyYAML's own resolver (typed here: its stubs leave it untyped).
_RESOLVE: Callable[[Any, type[Node], Any, tuple[bool, bool]], str] = yaml.CSafeLoader.resolve


def resolve_plain(loader: Any, value: str, implicit: tuple[bool, bool]) -> str:
    """The tag of a plain scalar, with ``=`` read as the string it is to every manifest tool."""
    tag = _RESOLVE(loader, ScalarNode, value, implicit)
    return _STR if tag == _VALUE else tag


class ValueAsStrLoader(yaml.CSafeLoader):
    """Stock CSafeLoader reading a plain ``=`` as a string (for kustomization and patch
    files, and edited documents, read outside :class:`StrictLoader`)."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            return resolve_plain(self, value, implicit)
        return _RESOLVE(self, kind, value, implicit)


class _Unusual(Exception):
    """The fast walk met something only PyYAML's constructor handles."""


def has_anchors(text: str) -> bool:
    return "&" in text and _ANCHOR.search(text) is not None


class StrictLoader(yaml.CSafeLoader):
    """CSafeLoader that refuses duplicate keys and builds plain documents fast."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = resolve_plain(self, value, implicit)
            return tag
        return _RESOLVE(self, kind, value, implicit)

    def build(self, node: Node, *, anchors: bool) -> Any:
        """The document's value; ``anchors`` says whether the text may share nodes."""
        if anchors:
            check_expansion(node)
        else:
            try:
                return self._value(node)
            except _Unusual:
                pass
        return self.construct_document(node)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE:
                if key_node.value in seen:
                    raise _duplicate(key_node.value, key_node)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)

    def _value(self, node: Node) -> Any:
        tag = node.tag
        if tag == _STR and type(node) is ScalarNode:
            return node.value
        if tag == _MAP and type(node) is MappingNode:
            return self._mapping(node)
        if tag == _SEQ and type(node) is SequenceNode:
            items = []
            for item in node.value:
                # a string item inline: most items are, and a call per item is most of the cost
                if item.tag == _STR and type(item) is ScalarNode:
                    items.append(item.value)
                else:
                    items.append(self._value(item))
            return items
        if tag in _PLAIN_SCALAR_TAGS and type(node) is ScalarNode:
            return self.yaml_constructors[tag](self, node)
        raise _Unusual

    def _mapping(self, node: MappingNode) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            # string keys and values inline (what :meth:`_value` returns for them)
            if key_node.tag == _STR and type(key_node) is ScalarNode:
                key = key_node.value
                if key in out:
                    raise _duplicate(key, key_node)
            else:
                key = self._value(key_node)
                try:
                    duplicate = key in out
                except TypeError:  # unhashable: PyYAML words the error
                    raise _Unusual from None
                if duplicate:
                    raise _duplicate(key_node.value, key_node)
            if value_node.tag == _STR and type(value_node) is ScalarNode:
                out[key] = value_node.value
            else:
                out[key] = self._value(value_node)
        return out


def _duplicate(key: Any, node: Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", node.start_mark)


def check_expansion(root: Node) -> None:
    """Refuse a document whose aliases would expand past the bound (memoised by node)."""
    sizes: dict[int, int] = {}

    def size(node: Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        sizes[id(node)] = 1  # cycles count once
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(n) for n in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > MAX_ALIAS_EXPANSION:
            raise ExpansionError(node.start_mark.line + 1)
        sizes[id(node)] = total
        return total

    size(root)


def safe_load_all_c(text: str) -> list[Any]:
    """``yaml.safe_load_all(text)``'s documents, read by libyaml (the pure-Python loader
    took most of a Flux repository's deployer reads). On an error the text is read again
    by the pure-Python loader, whose error is raised: its words are what messages quote."""
    try:
        return list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return list(yaml.safe_load_all(text))


def safe_load_c(text: str) -> Any:
    """``yaml.safe_load(text)`` read by libyaml, as :func:`safe_load_all_c`."""
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return yaml.safe_load(text)


def safe_node_and_data(text: str) -> tuple[Node | None, Any]:
    """``(yaml.compose(text), yaml.safe_load(text))`` from one libyaml parse: the node (its
    marks give a values file's lines) and the data built from it (as
    :func:`safe_load_all_c`, an error is the pure-Python loader's)."""
    try:
        loader = yaml.CSafeLoader(text)
        try:
            node = loader.get_single_node()
            return node, loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        return node, yaml.safe_load(text) if node is not None else None
