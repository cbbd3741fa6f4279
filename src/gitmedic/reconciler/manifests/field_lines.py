"""The line of each field of a plain YAML object, found only when a finding asks.

Detection parses with libyaml into plain values, which keep no lines; keeping a
line per field of 10,000 objects would cost what the parse costs. A finding
needs one line, so the file's text is kept (shared by its objects) and the one
document holding the object is composed again, to nodes with marks, when a
location is asked for. Paths are walked key by key, the longest key that fits
first, so keys holding dots (``app.kubernetes.io/name``) resolve; list indexes
may be written ``[0]`` or ``.0`` (schema paths).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

# A line that starts or ends a document (block scalars cannot hold one at column 0).
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)
_INDEX = re.compile(r"\[(\d+)\]|(\d+)(?=$|[.\[])")


@dataclass
class FileFields:
    """One file's text, and its documents composed as they are asked for."""

    text: str
    _starts: list[int] = field(default_factory=list)  # 1-based first line of each document
    _cuts: list[int] = field(default_factory=list)
    _composed: dict[int, Node | None] = field(default_factory=dict)

    def at(self, line: int) -> ObjectFields:
        """The fields of the object whose first key is on ``line``."""
        return ObjectFields(self, line)

    def object_node(self, line: int) -> Node | None:
        root = self._document(line)
        if root is None:
            return None
        return _mapping_at(root, line - 1)

    def _document(self, line: int) -> Node | None:
        if not self._cuts:
            self._cuts = [0, *(m.start() for m in _DOCUMENT_MARKER.finditer(self.text))]
            self._starts = [self.text.count("\n", 0, cut) + 1 for cut in self._cuts]
        index = bisect.bisect_right(self._starts, line) - 1
        if index not in self._composed:
            self._composed[index] = self._compose(index)
        return self._composed[index]

    def _compose(self, index: int) -> Node | None:
        start = self._cuts[index]
        end = self._cuts[index + 1] if index + 1 < len(self._cuts) else len(self.text)
        # Lines before the document are kept as blank lines, so marks are the file's lines.
        padded = "\n" * (self._starts[index] - 1) + self.text[start:end]
        try:
            nodes = list(yaml.compose_all(padded, Loader=yaml.CSafeLoader))
        except (yaml.YAMLError, RecursionError, ValueError):
            return None  # the parse already said what is wrong with it
        return next((n for n in nodes if n is not None), None)


class ObjectFields:
    """:class:`~gitmedic.detectors.origin.FieldLines` of one object of a file (one per
    object loaded, so a plain slotted class: cheaper to make than a frozen dataclass)."""

    __slots__ = ("file", "line")

    def __init__(self, file: FileFields, line: int) -> None:
        self.file = file
        self.line = line

    def line_of(self, path: str) -> int | None:
        node = self.file.object_node(self.line)
        return _walk(node, path) if node is not None else None


def _mapping_at(node: Node, line: int) -> Node | None:
    """The mapping starting on ``line`` (0-based): the document, or an item of a List."""
    pending = [node]
    while pending:
        current = pending.pop(0)
        if isinstance(current, MappingNode) and current.start_mark.line == line:
            return current
        if isinstance(current, MappingNode):
            pending += [v for _, v in current.value if v.start_mark.line <= line]
        elif isinstance(current, SequenceNode):
            pending += [v for v in current.value if v.start_mark.line <= line]
    return None


def _walk(node: Node, path: str) -> int | None:
    """The line of the deepest field of ``path`` found under ``node``."""
    line: int | None = None
    rest = path
    while rest:
        if isinstance(node, MappingNode):
            step = _key(node, rest)
            if step is None:
                break
            key, node, rest = step
            line = key.start_mark.line + 1
        elif isinstance(node, SequenceNode):
            match = _INDEX.match(rest)
            index = int(match[1] or match[2]) if match else -1
            if not 0 <= index < len(node.value):
                break
            node, rest = node.value[index], rest[match.end() if match else 0 :].lstrip(".")
            line = node.start_mark.line + 1
        else:
            break
    return line


def _key(node: MappingNode, rest: str) -> tuple[Node, Node, str] | None:
    """The entry whose key is the longest that ``rest`` starts with, and what follows it."""
    best: tuple[Node, Node, str] | None = None
    for key, value in node.value:
        name = key.value if isinstance(key, ScalarNode) else None
        if not isinstance(name, str) or not rest.startswith(name):
            continue
        after = rest[len(name) :]
        if after and after[0] not in ".[":
            continue
        if best is None or len(name) > len(best[0].value):
            best = (key, value, after.lstrip("."))
    return best
