"""Severity mu(state): worse states score higher, equal states equal."""

from __future__ import annotations

from gitmedic.detectors import Resource
from gitmedic.reconciler.oracles import (
    CapacityLoss,
    FiringAlert,
    Observation,
    ProbeResult,
    severity,
)

WEB = Resource("Deployment", "shop", "web", "apps/v1")
CART = Resource("Deployment", "shop", "cart", "apps/v1")


def alert(name: str, level: str = "") -> FiringAlert:
    labels = {"alertname": name, **({"severity": level} if level else {})}
    return FiringAlert.from_labels(labels)


def test_nothing_wrong_is_zero() -> None:
    assert severity(Observation()) == 0
    assert severity(Observation(probes=(ProbeResult("http://x", True, 200),))) == 0


def test_weights_table() -> None:
    assert severity(Observation(alerts=(alert("A", "critical"),))) == 10
    assert severity(Observation(alerts=(alert("A", "warning"),))) == 4
    assert severity(Observation(alerts=(alert("A"),))) == 4
    assert severity(Observation(alerts=(alert("A", "info"),))) == 1
    assert severity(Observation(probes=(ProbeResult("http://x", False, 503),))) == 8
    assert severity(Observation(capacity=(CapacityLoss(WEB, 4, 1),))) == 2.5
    assert severity(Observation(critical_findings=("f1", "f1", "f2"))) == 10  # distinct findings


def test_ordering_of_states() -> None:
    """A ladder of states an operator would rank from fine to terrible."""
    ladder = [
        Observation(),
        Observation(alerts=(alert("Slow", "info"),)),
        Observation(capacity=(CapacityLoss(WEB, 4, 1),)),  # one replica of four down
        Observation(alerts=(alert("HighLatency", "warning"),)),
        Observation(capacity=(CapacityLoss(WEB, 4, 2),)),  # half of web down
        Observation(probes=(ProbeResult("http://shop/", False, 503),)),
        Observation(capacity=(CapacityLoss(WEB, 1, 1),)),  # web entirely down
        Observation(
            capacity=(CapacityLoss(WEB, 1, 1),),
            probes=(ProbeResult("http://shop/", False, None, "ConnectError"),),
        ),
        Observation(
            capacity=(CapacityLoss(WEB, 1, 1), CapacityLoss(CART, 2, 2)),
            probes=(ProbeResult("http://shop/", False, None, "ConnectError"),),
            alerts=(alert("TargetDown", "critical"),),
            critical_findings=("svc-selector",),
        ),
    ]
    scores = [severity(o) for o in ladder]
    assert scores == sorted(scores) and len(set(scores)) == len(scores), scores


def test_adding_anything_wrong_never_lowers_mu() -> None:
    base = Observation(alerts=(alert("A", "warning"),), capacity=(CapacityLoss(WEB, 3, 1),))
    extras = [
        Observation(alerts=(alert("B", "info"),)),
        Observation(probes=(ProbeResult("u", False),)),
        Observation(capacity=(CapacityLoss(CART, 5, 1),)),
        Observation(critical_findings=("x",)),
    ]
    for extra in extras:
        assert severity(base.merge(extra)) > severity(base)


def test_capacity_is_capped_per_workload_and_zero_desired_counts_nothing() -> None:
    assert CapacityLoss(WEB, 2, 5).fraction == 1.0
    assert CapacityLoss(WEB, 0, 1).fraction == 0.0
