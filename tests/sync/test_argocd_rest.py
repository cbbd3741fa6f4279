"""The Argo CD REST watcher against real Application objects served by respx."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import respx

from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.sync import ArgoCDRestWatcher, SyncPhase
from tests.support.stepping import polled
from tests.sync.conftest import OTHER, SHA, deployed_velero, example_running, velero

SERVER = "https://argocd.example.test"
URL = f"{SERVER}/api/v1/applications/velero-test"
Make = Callable[..., ArgoCDRestWatcher]


@pytest.fixture
def watcher() -> Iterator[Make]:
    made: list[ArgoCDRestWatcher] = []

    def make(clock: FakeClock | None = None) -> ArgoCDRestWatcher:
        made.append(ArgoCDRestWatcher(SERVER, "velero-test", "tok3n", clock=clock or FakeClock()))
        return made[-1]

    yield make
    for w in made:
        w.close()


@respx.mock
def test_deployed_asks_for_a_hard_refresh_with_the_bearer_token(watcher: Make) -> None:
    route = respx.get(URL, params={"refresh": "hard"}).mock(
        return_value=httpx.Response(200, json=deployed_velero())
    )
    state = watcher(FakeClock(42.0)).check(SHA)
    assert state.phase is SyncPhase.DEPLOYED
    assert (state.revision, state.at) == (SHA, 42.0)
    assert route.calls.last.request.headers["Authorization"] == "Bearer tok3n"


@respx.mock
def test_an_abbreviated_sha_matches(watcher: Make) -> None:
    respx.get(URL).mock(return_value=httpx.Response(200, json=deployed_velero()))
    assert watcher().check(SHA[:12]).phase is SyncPhase.DEPLOYED


def _served(app: dict[str, Any], sha: str = SHA) -> tuple[SyncPhase, str]:
    with respx.mock:
        respx.get(URL).mock(return_value=httpx.Response(200, json=app))
        with ArgoCDRestWatcher(SERVER, "velero-test", "tok3n", clock=FakeClock()) as w:
            state = w.check(sha)
    return state.phase, state.message


def test_the_unmodified_dump_is_not_deployed_its_sync_revision_is_a_placeholder() -> None:
    assert _served(velero()) == (SyncPhase.PROGRESSING, f"synced to rev1, not {SHA}")


def test_another_commit_is_not_deployed() -> None:
    phase, message = _served(deployed_velero(), OTHER)
    assert phase is SyncPhase.PROGRESSING
    assert message == f"last successful sync applied {SHA}, not {OTHER}"


@pytest.mark.parametrize(
    ("path", "value", "expect"),
    [
        (("sync", "status"), "OutOfSync", "sync status is OutOfSync"),
        (("health", "status"), "Degraded", "health is Degraded"),
        (("health", "status"), "Progressing", "health is Progressing"),
        (("reconciledAt",), "2024-03-05T07:33:03Z", "before the sync finished"),
        (("operationState", "phase"), "Running", "sync operation Running"),
        (("operationState", "finishedAt"), None, "no finish time"),
    ],
)
def test_each_condition_of_deployed_is_needed(
    app: dict[str, Any], path: tuple[str, ...], value: Any, expect: str
) -> None:
    node = app["status"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    phase, message = _served(app)
    assert phase is SyncPhase.PROGRESSING and expect in message


def test_health_transition_after_the_sync_counts(app: dict[str, Any]) -> None:
    app["status"]["reconciledAt"] = "2024-03-05T07:00:00Z"  # stale, but health moved later
    app["status"]["health"]["lastTransitionTime"] = "2024-03-05T07:33:10Z"
    assert _served(app)[0] is SyncPhase.DEPLOYED


def test_a_health_that_stayed_healthy_through_the_sync_counts_once_reconciled_after_it(
    app: dict[str, Any],
) -> None:
    """Argo CD v3.6 moves ``lastTransitionTime`` only when the health changes: an app
    Healthy before and after the sync keeps the old one; ``reconciledAt`` says when
    the health was last assessed."""
    finished = app["status"]["operationState"]["finishedAt"]
    app["status"]["health"]["lastTransitionTime"] = "2024-03-05T07:00:00Z"
    app["status"]["reconciledAt"] = finished
    assert _served(app)[0] is SyncPhase.DEPLOYED
    app["status"]["reconciledAt"] = "2024-03-05T07:10:00Z"  # neither after the sync
    phase, message = _served(app)
    assert phase is SyncPhase.PROGRESSING
    assert message == "health was assessed at 2024-03-05T07:10:00Z, before the sync finished"


def test_a_real_running_operation_is_progressing() -> None:
    phase, message = _served(example_running(), OTHER)
    assert phase is SyncPhase.PROGRESSING
    assert message.startswith("sync operation Running: one or more objects failed to apply")


@pytest.mark.parametrize("phase", ["Failed", "Error"])
def test_a_failed_operation_at_the_sha_is_failed_with_its_message(phase: str) -> None:
    app = example_running()
    app["status"]["operationState"]["phase"] = phase
    got, message = _served(app, OTHER)
    assert got is SyncPhase.FAILED
    assert message.startswith(f"sync operation {phase}: one or more objects failed to apply")


def test_a_failed_operation_for_an_older_commit_is_not_our_failure() -> None:
    app = example_running()
    app["status"]["operationState"]["phase"] = "Failed"
    assert _served(app, SHA)[0] is SyncPhase.PROGRESSING


@pytest.mark.parametrize(
    ("response", "phase", "words"),
    [
        (httpx.Response(401, json={"error": "invalid session"}), SyncPhase.FAILED, "token"),
        (httpx.Response(403, json={"error": "permission denied"}), SyncPhase.FAILED, "token"),
        (httpx.Response(404, json={"error": "not found"}), SyncPhase.FAILED, "no application"),
        (httpx.Response(400, text="bad"), SyncPhase.FAILED, "HTTP 400"),
        (httpx.Response(500, text="boom"), SyncPhase.UNKNOWN, "HTTP 500"),
        (httpx.Response(503, text="down"), SyncPhase.UNKNOWN, "HTTP 503"),
        (httpx.Response(429, text="slow down"), SyncPhase.UNKNOWN, "HTTP 429"),
        (httpx.Response(200, text="<html>login</html>"), SyncPhase.UNKNOWN, "invalid JSON"),
        (httpx.Response(200, json=[1, 2]), SyncPhase.UNKNOWN, "no status"),
        (httpx.ConnectError("refused"), SyncPhase.UNKNOWN, "unreachable"),
        (httpx.ReadTimeout("slow"), SyncPhase.UNKNOWN, "ReadTimeout"),
    ],
)
@respx.mock
def test_http_outcomes(response: Any, phase: SyncPhase, words: str, watcher: Make) -> None:
    route = respx.get(URL)
    if isinstance(response, Exception):
        route.mock(side_effect=response)
    else:
        route.mock(return_value=response)
    state = watcher().check(SHA)
    assert state.phase is phase and words in state.message


@respx.mock
def test_auth_failure_is_not_retried(watcher: Make) -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(401))
    clock = FakeClock()
    answers = polled(watcher(clock), SHA, clock, every=10, for_s=300)
    assert answers[-1].phase is SyncPhase.FAILED and route.call_count == 1
    assert clock.now() == 0


@respx.mock
def test_server_errors_and_garbage_are_retried_until_deployed(watcher: Make) -> None:
    respx.get(URL).mock(
        side_effect=[
            httpx.Response(502),
            httpx.Response(200, text="{"),
            httpx.ConnectTimeout("t"),
            httpx.Response(200, json=example_running()),
            httpx.Response(200, json=deployed_velero()),
        ]
    )
    clock = FakeClock()
    answers = polled(watcher(clock), SHA, clock, every=10, for_s=300)
    assert [a.phase for a in answers] == [SyncPhase.UNKNOWN] * 3 + [
        SyncPhase.PROGRESSING,
        SyncPhase.DEPLOYED,
    ]
    assert len(answers) == 5 and clock.now() == 40


@respx.mock
def test_never_synced_times_out_exactly(watcher: Make) -> None:
    respx.get(URL).mock(return_value=httpx.Response(200, json=deployed_velero(OTHER)))
    clock = FakeClock(1_700_000_000.0)
    answers = polled(watcher(clock), SHA, clock, every=15, for_s=600)
    # never an answer that ends the wait: the sync timeout's to end (tests/sync/test_wait.py)
    assert {a.phase for a in answers} == {SyncPhase.PROGRESSING} and len(answers) == 41
    assert clock.now() == 1_700_000_600.0 and answers[-1].at == 1_700_000_600.0
    assert answers[-1].message.startswith("last successful sync applied")


@respx.mock
def test_app_namespace_is_passed_when_set() -> None:
    route = respx.get(URL, params={"refresh": "hard", "appNamespace": "team-a"}).mock(
        return_value=httpx.Response(200, json=deployed_velero())
    )
    with ArgoCDRestWatcher(SERVER + "/", "velero-test", "t", app_namespace="team-a") as w:
        assert w.check(SHA).phase is SyncPhase.DEPLOYED and route.called


def test_multi_source_revisions_count(app: dict[str, Any]) -> None:
    status = app["status"]
    status["sync"]["revisions"] = [OTHER, SHA]
    status["sync"]["revision"] = ""
    result = copy.deepcopy(status["operationState"]["syncResult"])
    result["revisions"], result["revision"] = [OTHER, SHA], ""
    status["operationState"]["syncResult"] = result
    assert _served(json.loads(json.dumps(app)))[0] is SyncPhase.DEPLOYED
