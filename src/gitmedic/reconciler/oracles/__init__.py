"""Oracles: is the application healthy? Measured Argo-Rollouts style, one
measurement at a time, combined worst-phase-wins, and scored by severity mu(state).

Oracles: cluster state (health functions over a snapshot), alerts (Alertmanager
or Prometheus), HTTP probes, and detectors (critical findings); ``NoWorse``
judges any of them against its reading at a transaction's checkpoint.
"""

from gitmedic.reconciler.oracles.alerts import (
    AlertListOracle,
    AlertsOracle,
    AlertSource,
    AlertSourceError,
)
from gitmedic.reconciler.oracles.baseline import Baseline, NoWorse, problems, recorded
from gitmedic.reconciler.oracles.cluster import ClusterStateOracle
from gitmedic.reconciler.oracles.expr import ConditionError, compile_condition
from gitmedic.reconciler.oracles.findings import DetectorOracle
from gitmedic.reconciler.oracles.metric import (
    Measurement,
    MetricResult,
    MetricSpec,
    Oracle,
    Reading,
)
from gitmedic.reconciler.oracles.observation import (
    CapacityLoss,
    FiringAlert,
    Observation,
    ProbeResult,
    severity,
)
from gitmedic.reconciler.oracles.phase import AnalysisPhase, worst_phase
from gitmedic.reconciler.oracles.probes import HttpProbeOracle

__all__ = [
    "AlertListOracle",
    "AlertSource",
    "AlertSourceError",
    "AlertsOracle",
    "AnalysisPhase",
    "Baseline",
    "CapacityLoss",
    "ClusterStateOracle",
    "ConditionError",
    "DetectorOracle",
    "FiringAlert",
    "HttpProbeOracle",
    "Measurement",
    "MetricResult",
    "MetricSpec",
    "NoWorse",
    "Observation",
    "Oracle",
    "ProbeResult",
    "Reading",
    "compile_condition",
    "problems",
    "recorded",
    "severity",
    "worst_phase",
]
