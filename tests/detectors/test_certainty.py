"""Certainty is the contract of a critical: meta-tests over the detector registry.

Every built-in detector declares in its spec what makes its criticals uncertain
(``uncertain_when``) or why nothing can (``certain_because``). Each declared
uncertainty is proven by a case file (tests/detectors/cases/<detector>/) holding

    downgrade: <uncertainty id>
    certain_without: [{kind, name}, ...]   # the objects that make it uncertain
    certain_with: [<object>, ...]          # or what makes it certain (replaces same name)

whose ``expect`` has no critical; and with those objects removed (or added) the
same resource gets a critical under the same rule, so the case shows the
downgrade, not a detector that is silent anyway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.detectors import Detector, Mode, Severity, Snapshot, run_detectors
from tests.detectors.test_cases import CASES, REGISTRY, SCHEMAS, load_case, to_obj


def _downgrade_cases(detector: Detector) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((CASES / detector.id).glob("*.yaml")):
        marker = yaml.safe_load(path.read_text()).get("downgrade")
        if marker:
            out[str(marker)] = path
    return out


def _critical_capable(detector: Detector) -> bool:
    if detector.spec.severity is Severity.CRITICAL:
        return True
    expects = [load_case(p)[1] for p in (CASES / detector.id).glob("*.yaml")]
    return any(e.get("severity") == "critical" for expect in expects for e in expect)


@pytest.mark.parametrize("detector", list(REGISTRY), ids=lambda d: d.id)
def test_every_detector_declares_what_makes_it_uncertain(detector: Detector) -> None:
    spec = detector.spec
    assert spec.uncertain_when or spec.certain_because.strip(), (
        f"{detector.id} declares neither uncertain_when nor certain_because"
    )
    for uncertainty in spec.uncertain_when:
        assert uncertainty.unseen.strip() and uncertainty.certain_if.strip()


UNCERTAINTIES = [(d, u.id) for d in REGISTRY if _critical_capable(d) for u in d.spec.uncertain_when]


@pytest.mark.parametrize(
    ("detector", "uncertainty"), UNCERTAINTIES, ids=lambda v: v if isinstance(v, str) else v.id
)
def test_every_uncertainty_has_a_case_proving_the_downgrade(
    detector: Detector, uncertainty: str
) -> None:
    path = _downgrade_cases(detector).get(uncertainty)
    assert path is not None, f"{detector.id}: no case with downgrade: {uncertainty}"
    case = yaml.safe_load(path.read_text())
    snapshot, expect = load_case(path)
    assert expect, f"{path.name}: a downgrade case expects the downgraded finding"
    assert all(e.get("severity") in ("warning", "info") for e in expect), path.name
    downgraded = _findings(detector, snapshot)
    assert downgraded and all(f.severity is not Severity.CRITICAL for f in downgraded)

    certain = _findings(detector, _certain_snapshot(case))
    for before in downgraded:
        same = [f for f in certain if f.resource == before.resource and f.rule == before.rule]
        assert [f.severity for f in same] == [Severity.CRITICAL], (
            f"{path.name}: made certain, {before.resource} is still not critical"
        )


def test_the_meta_test_sees_the_declared_uncertainties() -> None:
    # A registry change that dropped every declaration would make the test above vacuous.
    ids = {u for _, u in UNCERTAINTIES}
    assert {"pods-from-custom-resource", "pods-outside-app", "created-at-runtime"} <= ids


def _certain_snapshot(case: dict[str, Any]) -> Snapshot:
    added = case.get("certain_with") or []
    removed = {(o["kind"], o["name"]) for o in case.get("certain_without") or []}
    removed |= {(o["kind"], o["metadata"]["name"]) for o in added}
    assert removed, "a downgrade case names certain_without or certain_with"
    kept = [o for o in case["objects"] if (o["kind"], o["metadata"]["name"]) not in removed]
    gone = len(case["objects"]) - len(kept)
    assert gone >= len(case.get("certain_without") or []), "certain_without names no object"
    mode = Mode(case.get("mode", "desired"))
    return Snapshot([to_obj(o) for o in kept + added], mode=mode, schema=SCHEMAS)


def _findings(detector: Detector, snapshot: Snapshot) -> list[Any]:
    result = run_detectors([detector], snapshot)
    assert not result.errors
    return list(result.findings)
