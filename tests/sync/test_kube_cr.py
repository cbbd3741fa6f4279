"""Watchers over custom resources read through the kubernetes client's
``get_namespaced_custom_object``, with a fake at that seam."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.sync import (
    SyncPhase,
    argocd_application_watcher,
    flux_kustomization_watcher,
)
from tests.support.stepping import polled
from tests.sync.conftest import OTHER, SHA, deployed_velero, example_running


class ApiError(Exception):
    """Shaped like kubernetes.client.ApiException: the HTTP status in ``.status``."""

    def __init__(self, status: int) -> None:
        super().__init__(f"({status})")
        self.status = status


class FakeCustomObjects:
    """Answers from a script (the last answer repeats); records the coordinates asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, ...]] = []

    def get_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, name: str
    ) -> Any:
        self.calls.append((group, version, namespace, plural, name))
        answer = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_argo_application_cr_uses_the_shared_rule() -> None:
    api = FakeCustomObjects(deployed_velero())
    state = argocd_application_watcher(api, "velero-test", "argo-cd", FakeClock(5.0)).check(SHA)
    assert (state.phase, state.revision, state.at) == (SyncPhase.DEPLOYED, SHA, 5.0)
    assert api.calls == [("argoproj.io", "v1alpha1", "argo-cd", "applications", "velero-test")]


def test_argo_application_cr_running_then_deployed() -> None:
    clock = FakeClock()
    api = FakeCustomObjects(example_running(), example_running(), deployed_velero(OTHER))
    watcher = argocd_application_watcher(api, "example", clock=clock)
    answers = polled(watcher, OTHER, clock, every=20, for_s=120)
    assert answers[-1].phase is SyncPhase.DEPLOYED and clock.now() == 40


@pytest.mark.parametrize(
    ("error", "phase", "words"),
    [
        (ApiError(401), SyncPhase.FAILED, "RBAC"),
        (ApiError(403), SyncPhase.FAILED, "RBAC"),
        (ApiError(404), SyncPhase.FAILED, "does not exist"),
        (ApiError(500), SyncPhase.UNKNOWN, "HTTP 500"),
        (ConnectionRefusedError("no apiserver"), SyncPhase.UNKNOWN, "ConnectionRefusedError"),
    ],
)
def test_api_errors(error: Exception, phase: SyncPhase, words: str) -> None:
    watcher = argocd_application_watcher(FakeCustomObjects(error), "velero-test")
    state = watcher.check(SHA)
    assert state.phase is phase and words in state.message
    assert "applications.argoproj.io argocd/velero-test" in state.message


def test_flux_watcher_coordinates_and_retry_after_a_server_error() -> None:
    ready = {
        "metadata": {"name": "apps", "generation": 1},
        "status": {
            "observedGeneration": 1,
            "lastAppliedRevision": f"main@sha1:{SHA}",
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded"}
            ],
        },
    }
    clock = FakeClock()
    api = FakeCustomObjects(ApiError(503), ready)
    watcher = flux_kustomization_watcher(api, "apps", clock=clock)
    answers = polled(watcher, SHA, clock, every=10, for_s=60)
    assert [a.phase for a in answers] == [SyncPhase.UNKNOWN, SyncPhase.DEPLOYED]
    assert api.calls[0] == (
        "kustomize.toolkit.fluxcd.io", "v1", "flux-system", "kustomizations", "apps"
    )  # fmt: skip
