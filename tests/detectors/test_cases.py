"""Every detector against its YAML cases: tests/detectors/cases/<detector>/<case>.yaml.

A case is ``{mode: desired|live, objects: [...], expect: [{rule?, kind, name,
namespace?, severity?}]}``; an empty ``expect`` is a negative case. A new case
needs no new code. Meta-tests hold every detector to kube-linter's bar: a
remediation, at least one positive and one negative case.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.detectors import Mode, Obj, Resource, Snapshot, run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.snapshot import CLUSTER_SCOPED
from gitmedic.reconciler.manifests.schema import KubernetesSchemas

CASES = Path(__file__).parent / "cases"
SCHEMAS = KubernetesSchemas("1.30")  # what the manifest loader gives every snapshot
REGISTRY = builtin_registry()


def load_case(path: Path) -> tuple[Snapshot, list[dict[str, Any]]]:
    case = yaml.safe_load(path.read_text())
    objs = [to_obj(o) for o in case["objects"]]
    mode = Mode(case.get("mode", "desired"))
    return Snapshot(objs, mode=mode, schema=SCHEMAS), case.get("expect") or []


def to_obj(body: dict[str, Any], namespace: str = "default") -> Obj:
    meta = body.setdefault("metadata", {})
    kind = body["kind"]
    if kind not in CLUSTER_SCOPED:
        meta.setdefault("namespace", namespace)
    ref = Resource(kind, meta.get("namespace", ""), meta["name"], body["apiVersion"])
    return Obj(ref, body)


def all_cases() -> list[Path]:
    return sorted(CASES.glob("*/*.yaml"))


@pytest.mark.parametrize("path", all_cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case(path: Path) -> None:
    detector = REGISTRY.get(path.parent.name)
    snapshot, expect = load_case(path)
    before = json.dumps([o.body for o in snapshot], sort_keys=True)
    result = run_detectors([detector], snapshot)
    assert not result.errors
    got = [
        {"rule": f.rule, "kind": f.resource.kind, "name": f.resource.name,
         "namespace": f.resource.namespace, "severity": f.severity.value}
        for f in result.findings
    ]  # fmt: skip
    # Each expected entry pins the keys it names; findings come in the defined order.
    assert [{k: g[k] for k in e} for g, e in zip(got, expect, strict=False)] == expect
    assert len(got) == len(expect), f"got {got}"
    # Detectors are pure: the snapshot is unchanged, and a second run agrees.
    assert json.dumps([o.body for o in snapshot], sort_keys=True) == before
    assert run_detectors([detector], copy.deepcopy(snapshot)).findings == result.findings


@pytest.mark.parametrize("detector", list(REGISTRY), ids=lambda d: d.id)
def test_every_detector_is_documented_and_has_both_cases(detector: Any) -> None:
    assert detector.spec.remediation.strip()
    assert detector.spec.description.strip()
    cases = [load_case(p)[1] for p in sorted((CASES / detector.id).glob("*.yaml"))]
    assert any(cases), f"{detector.id} has no positive case"
    assert any(not c for c in cases), f"{detector.id} has no negative case"
