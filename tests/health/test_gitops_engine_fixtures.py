"""Every gitops-engine health fixture gets the status its upstream test asserts.

One line per fixture, straight from index.yaml (transcribed from argo-cd's
gitops-engine/pkg/health/health_test.go), plus Argo CD's own expectations for
its Flux Kustomization and HelmRelease health checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.reconciler.health import health_of
from tests.conftest import DATA

ENGINE = DATA / "gitops-engine-health"
INDEX = yaml.safe_load((ENGINE / "index.yaml").read_text())["fixtures"]
FLUX_KUSTOMIZATION = DATA / "argocd-application" / "flux-kustomization"
FLUX_HELMRELEASE = Path(__file__).parent / "fixtures" / "flux-helmrelease"


@pytest.mark.parametrize("fixture", INDEX, ids=lambda fx: fx["file"])
def test_engine_fixture(fixture: dict[str, Any]) -> None:
    health = health_of(yaml.safe_load((ENGINE / fixture["file"]).read_text()))
    if fixture["expected_status"] is None:
        assert health is None  # upstream: no built-in health for this kind
        return
    assert health is not None
    assert health.status.value == fixture["expected_status"]
    if fixture["message_asserted"]:
        assert health.message == fixture["expected_message"]


def test_index_covers_every_testdata_file() -> None:
    listed = {fx["file"] for fx in INDEX}
    on_disk = {f"testdata/{p.name}" for p in (ENGINE / "testdata").glob("*.yaml")}
    assert on_disk <= listed


def _argo_lua_cases(folder: Path) -> list[tuple[Path, dict[str, str]]]:
    tests = yaml.safe_load((folder / "health_test.yaml").read_text())["tests"]
    return [(folder / Path(t["inputPath"]).name, t["healthStatus"]) for t in tests]


@pytest.mark.parametrize(
    ("path", "expected"),
    _argo_lua_cases(FLUX_KUSTOMIZATION) + _argo_lua_cases(FLUX_HELMRELEASE),
    ids=lambda v: f"{v.parent.name}/{v.name}" if isinstance(v, Path) else "",
)
def test_flux_fixture(path: Path, expected: dict[str, str]) -> None:
    health = health_of(yaml.safe_load(path.read_text()))
    assert health is not None
    assert (health.status.value, health.message) == (expected["status"], expected["message"])


ARGO_ROLLOUT = Path(__file__).parent / "fixtures" / "argo-rollout"


@pytest.mark.parametrize(
    "case",
    yaml.safe_load((ARGO_ROLLOUT / "health_test.yaml").read_text())["tests"],
    ids=lambda t: t["inputPath"],
)
def test_argo_rollout_fixture(case: dict[str, Any]) -> None:
    # Argo CD's expectations for its Rollout health check; a message is pinned where given.
    health = health_of(yaml.safe_load((ARGO_ROLLOUT / case["inputPath"]).read_text()))
    assert health is not None
    expected = case["healthStatus"]
    assert health.status.value == expected["status"]
    if "message" in expected:
        assert health.message == expected["message"]
