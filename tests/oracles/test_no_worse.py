"""NoWorse: an oracle judged against its own reading at the checkpoint, in the verification
window stepped on a fake clock."""

from __future__ import annotations

from typing import Any

from gitmedic.detectors import Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.oracles import (
    AlertListOracle,
    AlertSourceError,
    ClusterStateOracle,
    NoWorse,
)
from gitmedic.reconciler.transaction import Verdict, VerdictPhase
from tests.oracles.test_cluster_and_findings import NS, shop
from tests.support.stepping import window

P = VerdictPhase


def alert(name: str, **labels: str) -> dict[str, Any]:
    """One alert in Alertmanager's GET /api/v2/alerts shape."""
    return {
        "labels": {"alertname": name, "namespace": NS, **labels},
        "status": {"state": "active", "silencedBy": [], "inhibitedBy": []},
    }


class Source:
    """What the alert source answers now: a list, or an error."""

    def __init__(self, *alerts: dict[str, Any]) -> None:
        self.alerts: list[dict[str, Any]] = list(alerts)
        self.down = False

    def read(self) -> list[dict[str, Any]]:
        if self.down:
            raise AlertSourceError("alertmanager unreachable")
        return self.alerts


def alerts_oracle(source: Source) -> NoWorse:
    inner = AlertListOracle(source.read, {"namespace": NS}, described="a test source")
    return NoWorse(inner, interval=10, count=6, described="alerts")


def cluster_oracle(snapshots: list[Snapshot]) -> NoWorse:
    """The cluster state, one snapshot per reading (the last one repeats)."""

    def snapshot() -> Snapshot:
        return snapshots.pop(0) if len(snapshots) > 1 else snapshots[0]

    return NoWorse(ClusterStateOracle(snapshot, NS), interval=10, count=3, described="cluster")


def test_alerts_firing_at_the_checkpoint_do_not_fail_the_window() -> None:
    source = Source(alert("KubePodCrashLooping", pod="web-1", severity="warning"))
    result = window([alerts_oracle(source)], FakeClock())
    assert result.verdict.phase is P.SUCCESSFUL and result.seconds == 50
    assert result.verdict.mu == 4  # the old alert still counts in mu, for mu(post) <= mu(pre)


def test_an_alert_that_starts_firing_fails_the_window_at_once() -> None:
    source = Source(alert("KubePodCrashLooping", pod="web-1"))
    oracle = alerts_oracle(source)
    clock = FakeClock()
    source.alerts.append(alert("HighErrorRate", service="web", severity="critical"))

    result = window([oracle], clock)

    assert result.verdict.phase is P.FAILED and clock.now() == 0
    (mark,) = result.measurements[-1].marks
    assert mark.worse == (
        'alert HighErrorRate{namespace="shop", service="web", severity="critical"} firing',
    )
    assert result.verdict.findings[0] == (
        'alerts got worse: alert HighErrorRate{namespace="shop", service="web", '
        'severity="critical"} firing'
    )


def test_an_alert_gone_at_the_checkpoint_and_back_later_fails() -> None:
    source = Source()
    oracle = alerts_oracle(source)
    source.alerts.append(alert("TargetDown", service="cart"))
    assert window([oracle], FakeClock()).verdict.phase is P.FAILED


def test_an_alert_source_that_goes_down_during_the_window_is_an_error() -> None:
    source = Source(alert("KubePodCrashLooping", pod="web-1"))
    oracle = alerts_oracle(source)
    source.down = True

    verdict = window([oracle], FakeClock()).verdict

    assert verdict.phase is P.ERROR
    lines = verdict.findings
    assert lines[0].startswith("alerts error: ") and "alertmanager unreachable" in lines[0]


def test_a_checkpoint_that_could_not_see_cannot_pass_a_window_with_alerts() -> None:
    source = Source()
    source.down = True
    oracle = alerts_oracle(source)
    assert not oracle.known and "alertmanager unreachable" in oracle.baseline.error
    source.down = False

    assert window([oracle], FakeClock()).verdict.phase is P.SUCCESSFUL  # nothing fires at all
    source.alerts.append(alert("TargetDown", service="cart"))
    assert window([oracle], FakeClock()).verdict.phase is P.INCONCLUSIVE  # new or old? a person


def test_replicas_lost_before_the_checkpoint_do_not_fail_it_more_lost_do() -> None:
    def verdict(snapshots: list[Snapshot]) -> Verdict:
        return window([cluster_oracle(snapshots)], FakeClock()).verdict

    assert verdict([shop(1), shop(1)]).phase is P.SUCCESSFUL
    assert verdict([shop(1), shop(0)]).phase is P.SUCCESSFUL

    worse = verdict([shop(1), shop(3)])

    assert worse.phase is P.FAILED
    assert worse.findings[0] == (
        "cluster got worse: Deployment/shop/web: replicas unavailable: 3 (was 1)"
    )


def test_an_object_newly_degraded_fails_the_cluster_state() -> None:
    result = window([cluster_oracle([shop(0), shop(1)])], FakeClock())

    assert result.verdict.phase is P.FAILED
    worse = result.measurements[-1].marks[0].worse
    assert "Deployment/shop/web: replicas unavailable" in worse
    assert any(w.startswith("Pod/shop/web-6d4cf56db6-0 is Degraded") for w in worse)
    assert "Pod/shop/web-6d4cf56db6-0 is Degraded, Missing or Unknown" in (
        result.measurements[-1].seen
    )


class Sequence_(Source):
    """Answers one list per read (the last repeats): a blip, or a lasting regression."""

    def __init__(self, *reads: list[dict[str, Any]]) -> None:
        super().__init__()
        self.reads = list(reads)

    def read(self) -> list[dict[str, Any]]:
        return self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]


def _with_limit(source: Source, limit: int) -> NoWorse:
    inner = AlertListOracle(source.read, {"namespace": NS}, described="a test source")
    return NoWorse(inner, interval=10, count=6, described="alerts", failure_limit=limit)


def test_the_configured_failure_limit_tolerates_a_blip_but_not_a_lasting_regression() -> None:
    crash = [alert("KubePodCrashLooping", pod="web-1", severity="warning")]

    def blip() -> Source:  # the baseline reading, one worse reading, then quiet again
        return Sequence_([], crash, [], [])

    assert window([_with_limit(blip(), 1)], FakeClock()).verdict.phase is P.SUCCESSFUL
    assert window([_with_limit(blip(), 0)], FakeClock()).verdict.phase is P.FAILED
    lasting = Sequence_([], crash)
    assert window([_with_limit(lasting, 1)], FakeClock()).verdict.phase is P.FAILED


def test_an_alert_pending_at_the_checkpoint_is_not_new_when_it_fires_in_the_window() -> None:
    """Its condition held before the change (its ``for`` not yet elapsed): firing during
    the window, it is the fault's alert catching up, not the change's doing."""
    error_rate = alert("HighErrorRate", service="frontend", severity="critical")
    firing = Sequence_([], [error_rate], [error_rate], [])
    waiting = Sequence_([error_rate], [], [], [])

    def oracle(pending: Source | None) -> NoWorse:
        inner = AlertListOracle(firing.read, {"namespace": NS}, described="a test source",
                                read_pending=pending.read if pending else None)  # fmt: skip
        return NoWorse(inner, interval=10, count=6, described="alerts")

    assert window([oracle(waiting)], FakeClock()).verdict.phase is P.SUCCESSFUL
    firing.reads = [[], [error_rate], [error_rate], []]
    assert window([oracle(None)], FakeClock()).verdict.phase is P.FAILED
