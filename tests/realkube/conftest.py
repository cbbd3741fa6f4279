"""The real-cluster tier: every module here sets ``pytestmark = REALKUBE`` and runs
against one shared control plane with Flux and Argo CD (:mod:`tests.realkube.tier`).

A machine without the binaries skips the tier, and says why (``-ra`` prints the
reason: what is missing and the build command).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.realkube.argocd import ArgoCD
from tests.realkube.control_plane import ControlPlane, start_api_server
from tests.realkube.flux import Flux
from tests.realkube.processes import Processes, stop_recorded
from tests.realkube.tier import ARGOCD_FAILED, Tier, shared_tier
from tests.realkube.tools import find_tools

REALKUBE = [pytest.mark.realkube, pytest.mark.integration]
STARTED_IN_S = pytest.StashKey[float]()


@pytest.fixture(scope="session")
def tier(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Tier]:
    tools = find_tools()
    if isinstance(tools, str):
        pytest.skip(f"realkube tier skipped: {tools}")
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "realkube"
    with shared_tier(tools, shared) as running:
        if running.started_in_s:
            request.config.stash[STARTED_IN_S] = running.started_in_s
        yield running


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """How long the tier took to start (bench/RESULTS.md records it)."""
    if STARTED_IN_S in config.stash:
        started = config.stash[STARTED_IN_S]
        terminalreporter.write_line(f"realkube: the tier started in {started:.1f} s")


@pytest.fixture(scope="module")
def lease_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """etcd and kube-apiserver only, for a module's tests of Leases (the shard tests):
    they need nothing else, and the whole tier's controllers, Flux and Argo CD would
    cost minutes of two shared cores."""
    tools = find_tools()
    if isinstance(tools, str):
        pytest.skip(f"realkube tier skipped: {tools}")
    folder = tmp_path_factory.mktemp("lease-plane")
    try:
        yield start_api_server(tools, folder, Processes(folder))
    finally:
        stop_recorded(folder)


@pytest.fixture
def flux(tier: Tier) -> Flux:
    """Real Flux on the tier, or a skip saying why it is not there."""
    if isinstance(tier.flux, str):
        pytest.skip(f"realkube Flux tests skipped: {tier.flux}")
    return tier.flux


@pytest.fixture
def argocd(tier: Tier) -> ArgoCD:
    """Real Argo CD on the tier; a skip saying why when it is not built, a failure
    with its log when it is built but did not start."""
    if isinstance(tier.argocd, str):
        if tier.argocd.startswith(ARGOCD_FAILED):
            pytest.fail(tier.argocd)
        pytest.skip(f"realkube Argo CD tests skipped: {tier.argocd}")
    return tier.argocd


@pytest.fixture
def namespace(tier: Tier) -> Iterator[str]:
    """A fresh namespace per test, deleted afterwards (without waiting for it)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    tier.plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}])
    yield name
    tier.plane.kubectl("delete", "namespace", name, "--wait=false")
