"""The Flux Kustomization rule on Argo CD's real Flux test objects, with
revisions added in copies (the upstream objects carry none)."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.sync import SyncPhase, assess_kustomization
from gitmedic.reconciler.sync.flux_rules import commit_of
from tests.sync.conftest import OTHER, SHA, kustomization


@pytest.mark.parametrize(
    ("revision", "commit"),
    [
        (f"main@sha1:{SHA}", SHA),
        (f"main/{SHA}", SHA),
        (f"sha1:{SHA}", SHA),
        (SHA, SHA),
        (f"refs/heads/release/1.2@sha1:{SHA}", SHA),
    ],
)
def test_revision_spellings(revision: str, commit: str) -> None:
    assert commit_of(revision) == commit


@pytest.mark.parametrize("spelling", [f"main@sha1:{SHA}", f"main/{SHA}"])
def test_ready_at_the_sha_is_deployed(spelling: str) -> None:
    obj = kustomization("healthy")
    obj["status"]["lastAppliedRevision"] = spelling
    state = assess_kustomization(obj, SHA, 3.0)
    assert (state.phase, state.revision, state.at) == (SyncPhase.DEPLOYED, SHA, 3.0)
    assert assess_kustomization(obj, SHA[:7]).phase is SyncPhase.DEPLOYED


def test_ready_at_another_revision_is_progressing() -> None:
    obj = kustomization("healthy")
    obj["status"]["lastAppliedRevision"] = f"main@sha1:{OTHER}"
    state = assess_kustomization(obj, SHA)
    assert state.phase is SyncPhase.PROGRESSING and state.revision == OTHER
    obj["status"].pop("lastAppliedRevision")
    assert assess_kustomization(obj, SHA).message == f"applied nothing, not {SHA}"


def test_reconciling_is_progressing() -> None:
    obj = kustomization("progressing")
    obj["status"]["lastAppliedRevision"] = f"main@sha1:{SHA}"  # the previous apply
    state = assess_kustomization(obj, SHA)
    assert state.phase is SyncPhase.PROGRESSING
    assert state.message == "Progressing: Running 'upgrade' action with timeout of 5m0s"


def test_artifact_failed_is_failed() -> None:
    state = assess_kustomization(kustomization("degraded"), SHA)
    assert state.phase is SyncPhase.FAILED
    assert (
        state.message
        == 'ArtifactFailed: GitRepository.source.toolkit.fluxcd.io "podinfo" not found'
    )


@pytest.mark.parametrize(
    ("reason", "phase"),
    [
        ("BuildFailed", SyncPhase.FAILED),
        ("HealthCheckFailed", SyncPhase.FAILED),
        ("ReconciliationFailed", SyncPhase.FAILED),
        ("DependencyNotReady", SyncPhase.PROGRESSING),
    ],
)
def test_ready_false_reasons(reason: str, phase: SyncPhase) -> None:
    obj = kustomization("degraded")
    obj["status"]["conditions"][0]["reason"] = reason
    obj["status"]["lastAttemptedRevision"] = f"main@sha1:{SHA}"
    assert assess_kustomization(obj, SHA).phase is phase


def test_a_failure_of_another_revision_is_not_ours() -> None:
    obj = kustomization("degraded")
    obj["status"]["conditions"][0]["reason"] = "BuildFailed"
    obj["status"]["lastAttemptedRevision"] = f"main@sha1:{OTHER}"
    assert assess_kustomization(obj, SHA).phase is SyncPhase.PROGRESSING


def test_stale_status_suspended_and_garbage() -> None:
    obj = kustomization("healthy")
    obj["status"]["lastAppliedRevision"] = f"main@sha1:{SHA}"
    obj["metadata"]["generation"] = 5
    obj["status"]["observedGeneration"] = 4
    assert assess_kustomization(obj, SHA).phase is SyncPhase.PROGRESSING
    obj["status"]["observedGeneration"] = 5
    assert assess_kustomization(obj, SHA).phase is SyncPhase.DEPLOYED
    obj["spec"]["suspend"] = True
    assert assess_kustomization(obj, SHA).message == "Kustomization is suspended"
    assert assess_kustomization("garbage", SHA).phase is SyncPhase.PROGRESSING
