"""Every object the sim emits validates (kubernetes-validate, strict) for its kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from gitmedic.sim.faults import MANIFEST_FAULTS
from tests.sim.faultcase import run_fault
from tests.sim.helpers import desired, sim_for

VERSION = "1.31.0"
# Shapes worth covering: running, crash-looping, pulling, unschedulable, init, HPA, quota.
SCENARIOS = (
    "bad-image",
    "memory-limit-too-small",
    "request-too-large",
    "init-container-hang",
    "hpa-no-cpu-request",
    "resource-quota-blocks",
    "readiness-probe-wrong",
)


def _invalid(objects: list[dict[str, Any]]) -> list[str]:
    problems = []
    for body in objects:
        try:
            kubernetes_validate.validate(body, VERSION, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            continue  # custom resources: no schema to check against
        except kubernetes_validate.ValidationError as exc:
            problems.append(f"{body['kind']}/{body['metadata']['name']}: {exc.message}")
    return problems


@pytest.mark.parametrize(
    "name", ["online-boutique", "astronomy-shop-otel-demo", "hotel-reservation"]
)
def test_healthy_app_objects_validate(name: str) -> None:
    state = sim_for(desired(name)).run(300, step_s=60)

    assert _invalid(list(state.observed.objects)) == []


@pytest.mark.parametrize("fault_id", SCENARIOS)
def test_faulty_app_objects_validate(fault_id: str, tmp_path: Path) -> None:
    outcome = run_fault(MANIFEST_FAULTS[fault_id], "online-boutique", tmp_path)

    assert _invalid(list(outcome.after.observed.objects)) == []
    kinds = {o["kind"] for o in outcome.after.observed.objects}
    assert {
        "Pod",
        "ReplicaSet",
        "Deployment",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "Node",
    } <= kinds
