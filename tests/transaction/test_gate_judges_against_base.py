"""The gate judges a candidate against its base: what the base already had does not block.

A finding present at the base and left as it was (same fingerprint, same
severity) is the base's. A finding the candidate introduces, or one of the
base's that it makes worse, blocks; and a target still present blocks, as before.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.detectors.spec import Detector, DetectorSpec
from gitmedic.reconciler.manifests.load import DesiredState
from gitmedic.reconciler.transaction.gate import Gate

WEB = Resource("Deployment", "shop", "web", "apps/v1")
SPEC = DetectorSpec(
    id="level",
    description="The level annotation, as a finding of its severity.",
    kinds=frozenset({"Deployment"}),
    severity=Severity.WARNING,
    remediation="Lower the level.",
)


def by_level(snapshot: Snapshot) -> Iterator[Finding]:
    """One finding per ``level/<name>`` annotation: its value is the severity."""
    for obj in snapshot:
        annotations = obj.body.get("metadata", {}).get("annotations", {})
        for key, level in sorted(annotations.items()):
            name = key.removeprefix("level/")
            yield SPEC.finding(obj.ref, f"{name} is {level}", rule=name, severity=Severity(level))


def state(**levels: str) -> DesiredState:
    annotations = {f"level/{k}": v for k, v in levels.items()}
    labels = {"app": "web"}
    pod = {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "web", "image": "w:1"}]},
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "annotations": annotations},
        "spec": {"selector": {"matchLabels": labels}, "template": pod},
    }
    return DesiredState(Snapshot([Obj(WEB, body)]))


def gate(base: DesiredState, head: DesiredState) -> Gate:
    revisions = {"base": base, "head": head}
    return Gate(revisions.__getitem__, [Detector(SPEC, by_level)])


def fingerprint(desired: DesiredState, rule: str) -> str:
    (found,) = [f for f in by_level(desired.snapshot) if f.rule == rule]
    return found.fingerprint


def test_a_finding_the_base_has_and_the_candidate_leaves_as_it_was_does_not_block() -> None:
    base = state(strategy="warning", memory="critical")
    head = state(strategy="warning")  # the fix clears memory, the chart's warning stays
    report = gate(base, head).check("base", "head", [fingerprint(base, "memory")])
    assert report.ok, report.problems


def test_a_finding_the_candidate_introduces_blocks() -> None:
    base = state(strategy="warning", memory="critical")
    head = state(strategy="warning", ports="warning")
    report = gate(base, head).check("base", "head", [fingerprint(base, "memory")])
    assert not report.ok
    assert report.problems == ("new finding level on Deployment/shop/web: ports is warning",)


def test_a_finding_of_the_base_the_candidate_makes_worse_blocks() -> None:
    base = state(strategy="warning", memory="critical")
    head = state(strategy="critical")
    report = gate(base, head).check("base", "head", [fingerprint(base, "memory")])
    assert report.problems == (
        "worse finding level on Deployment/shop/web (critical): strategy is critical",
    )


def test_a_target_left_in_place_still_blocks_even_when_the_base_had_it() -> None:
    base = state(strategy="warning", memory="critical")
    target = fingerprint(base, "strategy")
    report = gate(base, base).check("base", "head", [target])
    assert report.problems == (f"target finding {target} is still present",)


def test_a_detector_that_fails_on_the_candidate_refuses_it() -> None:
    """Its findings on the candidate are unknown: never counted as "nothing new"."""
    base = state(memory="critical")
    head = state(memory="bad")  # no severity: ``by_level`` raises on it
    report = gate(base, head).check("base", "head", [fingerprint(base, "memory")])
    assert not report.ok
    assert report.problems == (
        "detector level failed on the candidate: ValueError: 'bad' is not a valid Severity",
    )
