"""Parsing manifest text: documents, lines, strictness, and the fast loader's fidelity."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.reconciler.manifests.parse import load_strict_yaml, parse_text
from gitmedic.reconciler.manifests.yaml_loader import StrictLoader, has_anchors
from tests.conftest import DATA

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


def load_fast(text: str) -> list[Any]:
    loader = StrictLoader(text)
    try:
        out = []
        while loader.check_node():
            out.append(loader.build(loader.get_node(), anchors=has_anchors(text)))
        return out
    finally:
        loader.dispose()


def test_multi_document_file_yields_each_object_at_its_first_line() -> None:
    text = "# header\n---\n" + CM.format(name="a") + "---\n\n" + CM.format(name="b") + "---\n"
    parsed = parse_text(text, "f.yaml")
    assert parsed.errors == []
    assert [(o.body["metadata"]["name"], o.line, o.document) for o in parsed.objects] == [
        ("a", 3, 0),
        ("b", 9, 1),
    ]


def test_empty_documents_and_comment_only_files_are_not_errors() -> None:
    parsed = parse_text("---\n# nothing\n---\n", "f.yaml")
    assert parsed.objects == [] and parsed.errors == []


def test_kind_list_is_expanded_with_each_item_at_its_own_line() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n"
        "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: b\n"
    )
    parsed = parse_text(text, "list.yaml")
    assert [(o.body["kind"], o.line) for o in parsed.objects] == [("ConfigMap", 4), ("Secret", 8)]


def test_kind_list_in_json_is_expanded() -> None:
    text = '{"apiVersion": "v1", "kind": "List", "items": [' + (
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]}'
    )
    parsed = parse_text(text, "list.json")
    assert [o.body["metadata"]["name"] for o in parsed.objects] == ["a"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", 5, "duplicate key"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: [\n", 6, "invalid YAML"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n", 4, "tab character"),
        ("- a\n- b\n", 1, "document 1 is a list, not an object"),
        (CM.format(name="a") + "---\nhello\n", 6, "document 2 is a string, not an object"),
        ("kind: ConfigMap\nmetadata:\n  name: a\n", 1, "object has no apiVersion"),
        ("apiVersion: v1\nmetadata:\n  name: a\n", 1, "object has no kind"),
        ("apiVersion: v1\nkind: ConfigMap\n", 1, "ConfigMap has no metadata"),
        ("metadata:\n  name: a\n", 1, "object has no apiVersion and no kind"),
    ],
    ids=[
        "duplicate-key",
        "malformed",
        "tab",
        "list",
        "scalar",
        "no-apiversion",
        "no-kind",
        "no-metadata",
        "neither",
    ],
)
def test_bad_documents_are_errors_at_their_line(text: str, line: int, message: str) -> None:
    parsed = parse_text(text, "bad.yaml")
    assert [(e.file, e.line) for e in parsed.errors] == [("bad.yaml", line)]
    assert message in parsed.errors[0].message


def test_a_syntax_error_anywhere_drops_the_whole_file() -> None:
    parsed = parse_text(CM.format(name="a") + "---\nkey: [\n", "f.yaml")
    assert parsed.objects == []
    assert parsed.errors[0].line == 7


def test_duplicate_keys_are_refused_on_the_anchor_path_too() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: a\n  name: b\n"
    assert "duplicate key 'name'" in parse_text(text, "f.yaml").errors[0].message


def test_tab_error_names_the_line_in_a_later_document_of_a_long_file() -> None:
    docs = [CM.format(name=f"c{i}") for i in range(200)]
    text = "---\n".join(docs) + "---\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n"
    error = parse_text(text, "f.yaml").errors[0]
    assert (error.line, "tab" in error.message) == (text.count("\n"), True)


def test_tabs_inside_quoted_and_block_scalars_are_allowed() -> None:
    text = CM.format(name="a") + 'data:\n  q: "a\\tb\tc"\n  b: |\n    x\ty\n# note:\there\n'
    parsed = parse_text(text, "f.yaml")
    assert parsed.errors == []
    assert parsed.objects[0].body["data"]["b"] == "x\ty\n"


def test_alias_bomb_is_refused_with_its_line() -> None:
    rows = ['  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"  {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" + "\n".join(rows)
    errors = parse_text(text, "bomb.yaml").errors
    assert len(errors) == 1 and "alias" in errors[0].message and errors[0].line > 4


def test_small_anchors_and_merge_keys_still_work() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        "  labels: &l {app: x}\n  annotations:\n    <<: *l\n    more: y\n"
    )
    body = parse_text(text, "f.yaml").objects[0].body
    assert body["metadata"]["annotations"] == {"app": "x", "more": "y"}


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: 0x1f\nc: 1.5\nd: .inf\ne: yes\nf: ~\ng: 2001-12-14\n"
        "h: 2001-12-14t21:59:43.10-05:00",
        "a: !!binary aGVsbG8=\nb: !!str 12\nc: '12'\nd: \"x\"\ne: >\n  folded\n  text\n",
        "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}]\n",
        "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
        "? [a, b]\n: complex\n",
        "on: true\nnull: 1\n8080: port\n",
        "[1, 2, {a: [3, {b: c}]}]\n",
    ],
    ids=["scalars", "tags-and-styles", "collections", "merge", "unhashable", "odd-keys", "flow"],
)
def test_fast_loader_builds_what_csafeloader_builds(text: str) -> None:
    try:
        expected = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as exc:
        with pytest.raises(yaml.YAMLError) as got:
            load_fast(text)
        assert str(got.value) == str(exc)
        return
    assert load_fast(text) == expected


def test_fast_loader_agrees_with_csafeloader_on_every_real_yaml_file() -> None:
    checked = 0
    for path in sorted(DATA.rglob("*.y*ml")):
        text = path.read_text(encoding="utf-8")
        try:
            expected = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue
        try:
            got = load_fast(text)
        except yaml.constructor.ConstructorError as exc:
            assert "duplicate key" in str(exc), path  # the only allowed difference
            continue
        assert got == expected, path
        checked += 1
    assert checked > 200


def test_timestamps_keep_their_type() -> None:
    (doc,) = load_fast("t: 2001-12-14\n")
    assert doc == {"t": datetime.date(2001, 12, 14)}


def test_json_manifest_errors_have_lines(tmp_path: Path) -> None:
    parsed = parse_text('{"apiVersion": "v1",\n "kind": }\n', "x.json")
    assert [(e.line, e.message.startswith("invalid JSON")) for e in parsed.errors] == [(2, True)]


HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "data:\t\n  k: v\t\n",  # at a line's end (teastore's `selector:<TAB>`)
        HEAD + "data:\n  k:\tv\n",  # after a key's colon
        HEAD + "data:\n  k: v\t# note\n",  # before a comment
        HEAD + "data: {k: [a,\tb]}\n",  # inside a flow collection
        HEAD + "data: {k: [a,\n\tb]}\n",  # a flow collection's continuation line
        HEAD + "data:\n  k: one\n    \ttwo\n",  # a plain scalar's continuation, past its indent
        HEAD + "data:\n  k: |\n    x\n    \ty\n",  # block scalar content
        "---\t\n" + HEAD,  # after a document marker
    ],
)
def test_every_tab_libyaml_reads_is_read_as_libyaml_reads_it(text: str) -> None:
    parsed = parse_text(text, "tabs.yaml")
    assert parsed.errors == []
    assert [o.body for o in parsed.objects] == [yaml.load(text, Loader=yaml.CSafeLoader)]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (HEAD + "data:\n\tk: v\n", 6),  # a mapping indented by a tab
        (HEAD + "data:\n  \tk: v\n", 6),  # spaces then a tab
        (HEAD + "data:\n  k: |\n\tx\n", 7),  # a block scalar's indentation
        (HEAD + "data:\n  k: one\n\ttwo\n", 7),  # a plain scalar's continuation at column 0
        (HEAD + "data:\n  k:\n  -\tv\n", 7),  # a sequence item's nested indentation
    ],
)
def test_a_tab_used_as_indentation_is_refused_at_its_line(text: str, line: int) -> None:
    parsed = parse_text(text, "tabs.yaml")
    assert parsed.objects == []
    assert [(e.file, e.line) for e in parsed.errors] == [("tabs.yaml", line)]
    assert "tab character where YAML allows only spaces" in parsed.errors[0].message
    with pytest.raises(ValueError, match=rf"^tabs.yaml:{line}: invalid YAML: tab character"):
        load_strict_yaml(text, "tabs.yaml")


def test_an_error_elsewhere_in_a_file_with_tabs_is_not_called_a_tab() -> None:
    parsed = parse_text(HEAD + "data:\t\n  k: [v\n", "f.yaml")
    assert "tab" not in parsed.errors[0].message
