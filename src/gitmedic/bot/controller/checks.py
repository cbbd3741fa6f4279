"""The verification window's oracles for one app, built in one place.

A merged change is kept only if the combined oracles show the app no worse than
before (DESIGN.md). For one app they are, in this order:

1. the cluster state of its namespace (health of each object, ready replicas of
   each workload, from the live snapshot);
2. its firing alerts, when the cluster has an alert source (the sim's alert
   rules; Alertmanager or Prometheus from ``oracles.alerts`` of the config);
3. each HTTP probe of ``oracles.probes`` (failing on errors, and on answers slower
   than its ``max_latency_ms``), or the cluster's own reading of it (the sim
   answers from its traffic model: ``Cluster.probe_oracle``);
4. the detectors' critical findings.

Each is judged by :class:`NoWorse` against its own reading when the checks are
built (the transaction's checkpoint), so a problem that was already there never
fails a fix. The same :class:`Checks` gives the PR body its non-regression plan
(one line per oracle that will run) and the checkpoint's mu (the baselines'
severity, scored the way the window's readings are), so the plan, mu before and
mu after cannot disagree about what is measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.config import ProbeConfig
from gitmedic.reconciler.oracles import (
    Baseline,
    ClusterStateOracle,
    DetectorOracle,
    HttpProbeOracle,
    NoWorse,
    Observation,
    Oracle,
    recorded,
    severity,
)


class AlertFeed(Oracle, Protocol):
    """A cluster's alert source as an oracle, and how the PR body names it."""

    @property
    def described(self) -> str: ...


@dataclass(frozen=True)
class Checks:
    oracles: tuple[NoWorse, ...]

    @property
    def plan(self) -> tuple[str, ...]:
        """What the window checks, one line per oracle (the PR body's plan)."""
        return tuple(o.described for o in self.oracles)

    def baselines(self) -> dict[str, dict[str, int] | None]:
        """Each oracle's checkpoint reading, for the plan (see :func:`runtime_checks`)."""
        return recorded(self.oracles)

    @property
    def mu_before(self) -> float:
        """mu at the checkpoint, from the same oracles' baseline readings."""
        merged = Observation()
        for oracle in self.oracles:
            merged = merged.merge(oracle.baseline.observation)
        return severity(merged)


ProbeFeed = AlertFeed  # the same: an oracle and how the PR body names it


def runtime_checks(
    snapshot: Callable[[], Snapshot],
    namespace: str,
    alerts: AlertFeed | None,
    probes: Sequence[ProbeConfig],
    detectors: Sequence[Detector],
    *,
    probe_oracle: Callable[[ProbeConfig], ProbeFeed | None] = lambda probe: None,
    window_s: float,
    interval_s: float,
    failure_limit: int = 0,
    baselines: Mapping[str, Mapping[str, int] | None] | None = None,
) -> Checks:
    """The app's oracles over a window of ``window_s``, baselines taken now, or, for a
    transaction resumed after a restart, those its plan recorded at its checkpoint."""
    count = max(1, int(window_s // interval_s))

    def judged(oracle: Oracle, described: str) -> NoWorse:
        return NoWorse(
            oracle,
            interval=interval_s,
            count=count,
            described=described,
            failure_limit=failure_limit,
            baseline=_stored(baselines, described),
        )

    cluster = ClusterStateOracle(snapshot, namespace)
    oracles = [
        judged(
            cluster,
            f"cluster state of namespace {namespace}: no object newly Degraded, "
            "Missing or Unknown, no workload with fewer ready replicas",
        ),
    ]
    if alerts is not None:
        where = f"alerts of namespace {namespace} from {alerts.described}"
        oracles.append(judged(alerts, f"{where}: none firing that was not before"))
    for probe in probes:
        oracles.append(judged(*_probe(probe, probe_oracle(probe))))
    oracles.append(
        judged(DetectorOracle(snapshot, detectors), "detectors: no new critical finding")
    )
    return Checks(tuple(oracles))


def _probe(probe: ProbeConfig, own: ProbeFeed | None) -> tuple[Oracle, str]:
    """The probe's oracle and description: the cluster's own, else a real HTTP GET."""
    if own is not None:
        return own, own.described
    limit = f" within {probe.max_latency_ms:.0f} ms" if probe.max_latency_ms else ""
    http = HttpProbeOracle(
        [probe.url],
        name=f"probe {probe.url}",
        request_timeout=probe.timeout_s,
        max_latency_ms=probe.max_latency_ms,
    )
    return http, f"HTTP probe GET {probe.url}: answers 2xx or 3xx{limit} unless it failed before"


def _stored(
    baselines: Mapping[str, Mapping[str, int] | None] | None, described: str
) -> Baseline | None:
    """The recorded checkpoint of one oracle; None (read now) for an oracle the plan did
    not know (added to the config since): nothing better exists."""
    if baselines is None or described not in baselines:
        return None
    problems = baselines[described]
    if problems is None:
        return Baseline(Observation(), None, "could not be read at the checkpoint")
    return Baseline(Observation(), dict(problems))
