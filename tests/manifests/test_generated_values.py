"""Which file a kustomize ``configMapGenerator`` makes a Flux ``valuesFrom`` key of."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.reconciler.manifests.generated_values import GeneratedValuesError, generated_values


def kustomization(
    generator_options: dict[str, Any] | None = None, **generator: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"configMapGenerator": [{"name": "vals", **generator}]}
    if generator_options is not None:
        out["generatorOptions"] = generator_options
    return out


@pytest.mark.parametrize(
    ("given", "name", "key", "path"),
    [
        (kustomization(files=["v.yaml"]), "vals", "v.yaml", "v.yaml"),
        (kustomization(files=["cfg/v.yaml"]), "vals", "v.yaml", "cfg/v.yaml"),
        (kustomization(files=["values.yaml=cfg/v.yaml"]), "vals", "values.yaml", "cfg/v.yaml"),
        (kustomization(files=["a.yaml", "v.yaml"]), "vals-5g7fhm2hb8", "v.yaml", "v.yaml"),
        (
            kustomization(files=["v.yaml"], options={"disableNameSuffixHash": True}),
            "vals",
            "v.yaml",
            "v.yaml",
        ),
    ],
    ids=["base-name", "in-a-folder", "named-key", "hashed-name", "no-suffix"],
)
def test_the_generator_s_file_of_the_key_is_the_values(
    given: dict[str, Any], name: str, key: str, path: str
) -> None:
    assert generated_values(given, name, key) == path


@pytest.mark.parametrize(
    ("given", "name"),
    [
        (kustomization(files=["v.yaml"]), "other"),
        (kustomization(files=["v.yaml"]), "vals-short"),  # no kustomize hash
        (kustomization({"disableNameSuffixHash": True}, files=["v.yaml"]), "vals-5g7fhm2hb8"),
        (
            kustomization(options={"disableNameSuffixHash": True}, files=["v.yaml"]),
            "vals-5g7fhm2hb8",
        ),
        ({"configMapGenerator": "not a list"}, "vals"),
        ({}, "vals"),
    ],
)
def test_a_name_no_generator_makes_is_none(given: dict[str, Any], name: str) -> None:
    assert generated_values(given, name, "v.yaml") is None


def test_a_key_the_generator_does_not_give_names_the_keys_it_does() -> None:
    with pytest.raises(
        GeneratedValuesError, match=r"without a key values.yaml \(its files give v.yaml"
    ):
        generated_values(kustomization(files=["v.yaml"]), "vals", "values.yaml")


def test_values_in_a_literal_are_refused_not_skipped() -> None:
    with pytest.raises(GeneratedValuesError, match="as a literal"):
        generated_values(kustomization(literals=["v.yaml=replicas: 1"]), "vals", "v.yaml")
