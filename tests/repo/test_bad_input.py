def test_yaml_1_1_lookalike_keys_and_values_are_quoted() -> None:
    # Found by the property test: an unquoted `no: on` reads as {False: True} in YAML 1.1.
    from gitmedic.reconciler.manifests.apply import apply_edit
    from gitmedic.reconciler.manifests.edit import Edit

    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\n  labels:\n    a: b\n"
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
    out = apply_edit(text, edit).content
    assert '    "no": "on"\n    a: b\n' in out
    import yaml

    assert yaml.safe_load(out)["metadata"]["labels"] == {"no": "on", "a": "b"}
