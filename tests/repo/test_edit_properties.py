"""Property tests over the real apps: a random edit (set a scalar to a new value of the
same type, remove a key or item, insert a key) then its inverse gives the original
bytes; documents not edited stay byte-identical; the edited document reads back (PyYAML)
as exactly the intended value."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.apply import apply_edit
from gitmedic.reconciler.manifests.documents import (
    EditError,
    chunk_identity,
    same,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.parse import parse_text
from gitmedic.reconciler.manifests.paths import Segment, lookup
from tests.conftest import real_apps

Target = tuple[str, str, int]  # file, text, chunk index


@cache
def targets() -> list[Target]:
    out = []
    for app in real_apps():
        files = [app.path] if app.path.is_file() else sorted(app.path.rglob("*.y*ml"))
        for f in files:
            text = f.read_text()
            if parse_text(text, str(f)).errors:
                continue  # not canonical (e.g. tabs): the loader refuses these files
            chunks = split_chunks(split_lines(text))
            idents = [chunk_identity(c, str(f)) for c in chunks]
            for i, ident in enumerate(idents):
                if ident is not None and idents.count(ident) == 1:
                    out.append((str(f.relative_to(Path(__file__).parents[1])), text, i))
    return out


def _leaves(node: Any, path: tuple[Segment, ...] = ()) -> list[tuple[Segment, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() if isinstance(k, str) for p in _leaves(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))]
    return [path] if path else []


def _new_value(old: Any, draw: st.DrawFn) -> Any:
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return draw(st.integers(-5, 70000).filter(lambda v: v != old))
    if isinstance(old, float):
        return old + 1.5
    text = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), max_size=20)
    return draw(text.filter(lambda v: v != old and v == v.strip()))


@st.composite
def edits(draw: st.DrawFn) -> tuple[int, Edit]:
    target = draw(st.integers(0, len(targets()) - 1))
    file, text, index = targets()[target]
    chunk = split_chunks(split_lines(text))[index]
    kind, ns, name = chunk_identity(chunk, file) or ("", None, "")
    ref = Resource(kind, ns or "", name)
    doc = chunk.data()
    identity = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")}
    leaves = [p for p in _leaves(doc) if p not in identity]
    if not leaves:
        return target, Edit(Op.INSERT, file, ref, ("metadata", "labels"), {"x": "y"})
    path = draw(st.sampled_from(leaves))
    op = draw(st.sampled_from([Op.SET, Op.SET, Op.REMOVE, Op.INSERT]))
    if op is Op.SET:
        return target, Edit(Op.SET, file, ref, path, _new_value(lookup(doc, path)[1], draw))
    if op is Op.REMOVE:
        return target, Edit(Op.REMOVE, file, ref, path)
    parent = lookup(doc, path[:-1])[1]
    if isinstance(parent, dict):
        key = draw(
            st.from_regex(r"[a-z][a-zA-Z0-9]{0,10}", fullmatch=True).filter(
                lambda k: k not in parent
            )
        )
        where = draw(st.integers(0, len(parent)))
        value = draw(st.one_of(st.integers(0, 9999), st.just("on"), st.just({"a": ["b", 1]})))
        return target, Edit(Op.INSERT, file, ref, (*path[:-1], key), value, where)
    where = draw(st.integers(0, len(parent)))
    return target, Edit(Op.INSERT, file, ref, (*path[:-1], where), "added item")


def _intended(doc: Any, edit: Edit) -> Any:
    doc = copy.deepcopy(doc)
    parent = lookup(doc, edit.path[:-1])[1]
    last = edit.path[-1]
    if edit.op is Op.SET:
        parent[last] = edit.value
    elif edit.op is Op.REMOVE:
        del parent[last]
    elif isinstance(parent, list):
        assert isinstance(last, int)
        parent.insert(last, edit.value)
    else:
        items = list(parent.items())
        items.insert(edit.index or 0, (last, edit.value))
        parent.clear()
        parent.update(items)
    return doc


def check(case: tuple[int, Edit]) -> None:
    _, text, index = targets()[case[0]]
    edit = case[1]
    before = split_chunks(split_lines(text))
    try:
        applied = apply_edit(text, edit)
    except EditError as exc:
        pytest.fail(f"{edit.describe()}: {exc}")
    after = split_chunks(split_lines(applied.content))
    assert len(after) == len(before)
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if i != index:
            assert a.text == b.text, f"document {i} changed"
    intended = _intended(before[index].data(), edit)
    assert same(yaml.safe_load(after[index].text), intended)
    assert apply_edit(applied.content, applied.inverse).content == text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits())
def test_random_edit_and_inverse_round_trip(case: tuple[int, Edit]) -> None:
    check(case)


@pytest.mark.integration
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits())
def test_random_edit_and_inverse_round_trip_long(case: tuple[int, Edit]) -> None:
    check(case)


def _target(file: str, kind: str, name: str) -> int:
    """The index in :func:`targets` of the one document of ``file`` that is ``kind/name``."""
    (at,) = [
        i
        for i, (f, text, index) in enumerate(targets())
        if f == file
        and (chunk_identity(split_chunks(split_lines(text))[index], f) or ())[::2] == (kind, name)
    ]
    return at


def test_a_block_scalar_whose_text_has_hash_lines_is_replaced_whole() -> None:
    """Found by the long property run: setting otel-demo's ``opensearch.yml`` (a ``|``
    block whose text ends in ``#`` lines) to '' kept those lines as if they were YAML
    comments, and the edit was refused. Inside a block scalar they are the value's text."""
    file = "fixtures/data/apps/astronomy-shop-otel-demo/kubernetes/opentelemetry-demo.yaml"
    ref = Resource("ConfigMap", "", "opensearch-config", "v1")
    at = _target(file, "ConfigMap", "opensearch-config")
    check((at, Edit(Op.SET, file, ref, ("data", "opensearch.yml"), "")))


MIXED = "fixtures/data/apps/social-network/openshift/url-shorten-mongodb.yaml"
MIXED_REF = Resource("Deployment", "social-network", "url-shorten-mongodb", "apps/v1")
CONTAINER = ("spec", "template", "spec", "containers", 0)


@pytest.mark.parametrize("value", [5, "on", {"a": ["b", 1]}])
def test_a_key_after_a_sequence_with_another_offset_is_indented_as_its_siblings(
    value: Any,
) -> None:
    """Found by the long property run: in social-network's ``url-shorten-mongodb.yaml``
    ``containers`` items sit at their key's column and the ``volumeMounts`` items under
    them two columns in. A key inserted after ``volumeMounts`` was indented like its
    items, so it read back inside the last mount and the edit was refused as "too
    irregular". It goes at its sibling keys' column."""
    at = _target(MIXED, "Deployment", "url-shorten-mongodb")
    edit = Edit(Op.INSERT, MIXED, MIXED_REF, (*CONTAINER, "zz"), value, 3)
    check((at, edit))
    lines = apply_edit(targets()[at][1], edit).content.splitlines()
    mount = lines.index('            mountPath: "/data/db"')
    assert lines[mount + 1].startswith("        zz:"), "at the column of volumeMounts"


@pytest.mark.parametrize(
    ("path", "where", "changed"),
    [
        ((*CONTAINER, "volumeMounts", 0), None, 1),  # an item in the offset-2 sequence
        ((*CONTAINER, "volumeMounts", 1), None, 1),
        (("spec", "template", "spec", "containers", 1), None, 1),  # in the offset-0 one
        # a key first in an item: the "- " moves to it, so the old first key's line changes
        ((*CONTAINER, "zz"), 0, 2),
        (("spec", "template", "spec", "volumes", 0, "zz"), 2, 1),
    ],
)
def test_inserts_around_sequences_of_both_offsets_are_minimal(
    path: tuple[Segment, ...], where: int | None, changed: int
) -> None:
    at = _target(MIXED, "Deployment", "url-shorten-mongodb")
    value = "added item" if isinstance(path[-1], int) else 7
    edit = Edit(Op.INSERT, MIXED, MIXED_REF, path, value, where)
    check((at, edit))
    applied = apply_edit(targets()[at][1], edit)
    old, new = targets()[at][1].splitlines(), applied.content.splitlines()
    assert len(new) == len(old) + 1
    assert applied.last_line - applied.first_line + 1 == changed, "nothing else rewritten"
