"""Edits never write a scalar that a YAML 1.1 reader (kubectl) would read differently."""

from __future__ import annotations

import yaml

from gitmedic.reconciler.manifests.apply import apply_edit
from gitmedic.reconciler.manifests.edit import Edit

TEXT = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\n  labels:\n    a: b\n"


def test_lookalike_keys_and_values_are_quoted() -> None:
    # Found by the property test: an unquoted `no: on` reads as {False: True} in YAML 1.1.
    edit = Edit.from_json(
        {
            "op": "insert",
            "file": "f.yaml",
            "path": ["metadata", "labels", "no"],
            "value": "on",
            "resource": {"kind": "ConfigMap", "namespace": "", "name": "flags"},
            "index": 0,
        }
    )
    out = apply_edit(TEXT, edit).content
    assert '    "no": "on"\n    a: b\n' in out
    assert yaml.safe_load(out)["metadata"]["labels"] == {"no": "on", "a": "b"}
