"""What the oracles saw, and the severity mu(state) computed from it.

Each oracle's reading contributes one part of an ``Observation`` (alerts,
probes, lost capacity, objects in a bad health state, critical findings); the
parts are merged and scored by ``severity``. Bad health states are not scored:
the capacity a workload lost already weighs what its Degraded pods cost, and
an object newly Degraded fails the cluster-state oracle on its own. A
transaction keeps a change only if mu(after) <= mu(before), so the score must
order states the way an operator would: more firing alerts, more failing
probes, more lost capacity, more critical findings = worse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gitmedic.detectors.finding import Resource

# Weight of each signal in mu (see ``severity``).
# ``page`` is the paging severity of Prometheus' own examples (its docs' HighRequestLatency):
# an alert that wakes a person weighs like a critical one.
ALERT_WEIGHTS: Mapping[str, float] = {
    "critical": 10.0,
    "page": 10.0,
    "warning": 4.0,
    "info": 1.0,
    "none": 1.0,
}
DEFAULT_ALERT_WEIGHT = 4.0  # an alert without a (known) severity label counts as a warning
PROBE_WEIGHT = 8.0
CAPACITY_WEIGHT = 10.0
FINDING_WEIGHT = 5.0


@dataclass(frozen=True, order=True)
class FiringAlert:
    name: str
    severity: str = ""
    labels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_labels(cls, labels: Mapping[str, object]) -> FiringAlert:
        pairs = tuple(sorted((str(k), str(v)) for k, v in labels.items()))
        return cls(str(labels.get("alertname", "")), str(labels.get("severity", "")), pairs)


@dataclass(frozen=True, order=True)
class ProbeResult:
    url: str
    ok: bool  # answered 2xx/3xx, within the probe's latency limit if it has one
    status: int | None = None
    message: str = ""
    latency_ms: float | None = None  # how long the answer took (None: no answer)


@dataclass(frozen=True, order=True)
class CapacityLoss:
    """Pods a workload wants but does not have serving (Ready and healthy)."""

    resource: Resource
    desired: int
    unavailable: int

    @property
    def fraction(self) -> float:
        if self.desired <= 0:
            return 0.0
        return min(self.unavailable, self.desired) / self.desired


@dataclass(frozen=True)
class Observation:
    alerts: tuple[FiringAlert, ...] = ()
    probes: tuple[ProbeResult, ...] = ()
    capacity: tuple[CapacityLoss, ...] = ()
    critical_findings: tuple[str, ...] = ()  # fingerprints
    degraded: tuple[Resource, ...] = ()  # objects Degraded, Missing or Unknown
    notes: tuple[str, ...] = field(default=(), compare=False)
    # Alerts whose condition holds but whose ``for`` has not elapsed (not scored in mu):
    # at a checkpoint they are already "before", though they fire only later.
    pending: tuple[FiringAlert, ...] = ()

    def merge(self, other: Observation) -> Observation:
        return Observation(
            self.alerts + other.alerts,
            self.probes + other.probes,
            self.capacity + other.capacity,
            self.critical_findings + other.critical_findings,
            self.degraded + other.degraded,
            self.notes + other.notes,
            self.pending + other.pending,
        )


def alert_weight(alert: FiringAlert) -> float:
    return ALERT_WEIGHTS.get(alert.severity.lower(), DEFAULT_ALERT_WEIGHT)


def severity(obs: Observation) -> float:
    """mu(state): a weighted sum of what is wrong; 0 means nothing is.

    | signal                                   | weight each                          |
    |------------------------------------------|--------------------------------------|
    | firing alert, ``critical`` / ``page``    | 10                                   |
    | firing alert, ``warning`` / no label     | 4                                    |
    | firing alert, ``info`` / ``none``        | 1                                    |
    | failing HTTP probe (errors, or too slow) | 8                                    |
    | workload capacity lost                   | 10 x unavailable / desired replicas  |
    | firing critical finding                  | 5                                    |

    Capacity is weighted by the fraction it removes: one of four replicas down is
    2.5, the whole workload down is 10 (a fully down workload scores like a
    critical alert). The score is monotone in every signal, so adding anything
    wrong never lowers it. Rounded to 6 places so equal states compare equal.
    """
    total = sum(alert_weight(a) for a in obs.alerts)
    total += PROBE_WEIGHT * sum(1 for p in obs.probes if not p.ok)
    total += CAPACITY_WEIGHT * sum(c.fraction for c in obs.capacity)
    total += FINDING_WEIGHT * len(set(obs.critical_findings))
    return round(total, 6)
