"""libyaml reads of values files and deployers give what PyYAML's pure-Python reads gave.

The deployer reads (a Flux HelmRelease's kustomizations) and a chart's values layers
went through the pure-Python ``yaml.safe_load``/``yaml.compose``; they now parse once
in libyaml. Values, node lines and error messages must be the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from gitmedic.reconciler.manifests.helm_trace import read_layer
from gitmedic.reconciler.manifests.yaml_loader import (
    safe_load_all_c,
    safe_load_c,
    safe_node_and_data,
)

TEXTS = [
    "replicaCount: 1\nimage:\n  tag: a\n  pull: IfNotPresent\n",
    "base: &b {cpu: 1, mem: 2Mi}\nprod:\n  <<: *b\n  mem: 4Mi\nwhen: 2024-01-02\nok: yes\n",
    "bin: !!binary aGVsbG8=\nfloats: [1.5, .inf, -.Inf, .nan]\noct: 0o17\nhex: 0x1f\n",
    "# only a comment\n",
    "",
    "- a\n- {b: [1, 2]}\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\n",
]
BROKEN = [
    "a: [1, 2\n",  # an unclosed flow sequence
    "a: 1\n b: 2\n",  # bad indentation
    "ops: ['!=', =]\n",  # YAML 1.1's value tag: no constructor
    "k: \t\x01\n",  # a control character
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_libyaml_reads_give_the_pure_python_values_and_lines(text: str) -> None:
    assert repr(safe_load_c(text)) == repr(yaml.safe_load(text))
    assert repr(safe_load_all_c(text)) == repr(list(yaml.safe_load_all(text)))
    node, data = safe_node_and_data(text)
    slow = yaml.compose(text, Loader=yaml.SafeLoader)
    assert repr(data) == repr(yaml.safe_load(text) if slow is not None else None)
    assert (node is None) == (slow is None)
    if node is not None and slow is not None:
        assert node.start_mark.line == slow.start_mark.line
    layer = read_layer("values.yaml", text)
    if isinstance(slow, yaml.MappingNode):
        assert layer.lines and all(n >= 1 for n in layer.lines.values())


@pytest.mark.parametrize("text", BROKEN)
def test_a_broken_text_raises_the_pure_python_loader_s_error(text: str) -> None:
    reads: list[tuple[Callable[[str], Any], Callable[[str], Any]]] = [
        (safe_load_c, yaml.safe_load),
        (safe_load_all_c, lambda t: list(yaml.safe_load_all(t))),
        (lambda t: safe_node_and_data(t)[1], yaml.safe_load),
    ]
    for fast, slow in reads:
        _same_error(text, fast, slow)


def test_two_documents_where_one_is_read_is_the_same_error() -> None:
    text = "a: 1\n---\nb: 2\n"
    _same_error(text, safe_load_c, yaml.safe_load)
    _same_error(text, lambda t: safe_node_and_data(t)[0], yaml.compose)


def _same_error(text: str, fast: Callable[[str], Any], slow: Callable[[str], Any]) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        slow(text)
    with pytest.raises(yaml.YAMLError) as got:
        fast(text)
    assert str(got.value) == str(expected.value)


def test_a_values_layer_keeps_each_key_s_line() -> None:
    layer = read_layer(
        "values.yaml", "# c\nimage:\n  tag: a\n\nresources:\n  limits:\n    memory: 1Mi\n"
    )
    assert layer.lines == {("image", "tag"): 3, ("resources", "limits", "memory"): 7}
    assert layer.data == {"image": {"tag": "a"}, "resources": {"limits": {"memory": "1Mi"}}}
