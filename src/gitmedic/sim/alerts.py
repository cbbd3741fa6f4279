"""Prometheus-style alerts over the sim, in Alertmanager's ``GET /api/v2/alerts`` shape.

Five rules, named and labelled as in kube-prometheus (plus two for the traffic
oracle): ``KubePodCrashLooping`` (a container waiting in CrashLoopBackOff),
``KubeDeploymentReplicasMismatch`` (desired replicas not available),
``TargetDown`` (a Service with a selector and no ready endpoint),
``HighErrorRate`` (an entry point answering under 95 %) and
``HighRequestLatency`` (an entry point slower than its baseline, the latency it
answered with when first seen healthy, by at least twice that and
:data:`LATENCY_MARGIN_MS` more: a +500 ms delay on a service it calls fires, the
sim's few ms of jitter never do). As in Prometheus a
condition must hold for the rule's ``for`` duration before the alert fires;
the tracker is immutable, so the sim can keep it between evaluations and tests
can assert exact firing times. Fingerprints are Prometheus' (FNV-1a 64 over the
sorted label pairs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitmedic.sim.cluster import Observed
from gitmedic.sim.stamps import iso_ms
from gitmedic.sim.traffic import Traffic

ERROR_RATE_THRESHOLD = 0.95
LATENCY_MARGIN_MS = 200.0
RESOLVE_TIMEOUT_S = 240.0  # what Prometheus sends as endsAt: 4 evaluation intervals ahead


@dataclass(frozen=True)
class AlertRules:
    """``for`` durations in seconds (shorter than kube-prometheus' 15 m, to fit sim time)."""

    crash_looping_s: float = 60.0
    replicas_mismatch_s: float = 120.0
    target_down_s: float = 60.0
    high_error_rate_s: float = 60.0
    high_latency_s: float = 60.0


@dataclass(frozen=True)
class Condition:
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    for_s: float

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.labels)


@dataclass(frozen=True)
class AlertTracker:
    """When each condition started to hold: (condition, active since)."""

    active: Mapping[str, tuple[Condition, float]] = field(default_factory=dict)

    def observe(self, now: float, conditions: Iterable[Condition]) -> AlertTracker:
        active = {}
        for cond in conditions:
            old = self.active.get(cond.fingerprint)
            active[cond.fingerprint] = (cond, old[1] if old else now)
        return AlertTracker(active)

    def firing(self, now: float) -> list[dict[str, Any]]:
        out = [
            _gettable(cond, since + cond.for_s, now)
            for cond, since in self.active.values()
            if now - since >= cond.for_s
        ]
        return sorted(out, key=lambda a: (a["labels"]["alertname"], a["fingerprint"]))

    def pending(self, now: float) -> list[dict[str, Any]]:
        """Conditions holding but not yet for their ``for`` (Prometheus' pending alerts),
        in the same shape; Alertmanager never receives these."""
        out = [
            {"labels": dict(sorted(cond.labels.items())), "activeAt": iso_ms(since)}
            for cond, since in self.active.values()
            if now - since < cond.for_s
        ]
        return sorted(out, key=lambda a: a["labels"]["alertname"])


def conditions(
    observed: Observed,
    traffic: Traffic,
    rules: AlertRules,
    latency_baseline: Mapping[str, float] | None = None,
) -> list[Condition]:
    out: list[Condition] = []
    for obj in observed.objects:
        kind = obj.get("kind")
        if kind == "Pod":
            out += _crash_looping(obj, rules)
        elif kind in ("Deployment", "StatefulSet"):
            out += _mismatch(obj, rules)
        elif kind == "Endpoints":
            out += _target_down(obj, rules)
    for key, result in traffic.entrypoints.items():
        if result.success_rate < ERROR_RATE_THRESHOLD:
            namespace, service = key.split("/", 1)
            out.append(
                Condition(
                    {
                        "alertname": "HighErrorRate",
                        "namespace": namespace,
                        "service": service,
                        "severity": "critical",
                    },
                    {
                        "summary": f"{service} answers {result.success_rate:.0%} of requests",
                        "description": result.why or "requests fail",
                    },
                    rules.high_error_rate_s,
                )
            )
    for key, base in sorted((latency_baseline or {}).items()):
        answer = traffic.entrypoints.get(key)
        if answer is not None and slow(answer.latency_ms, base):
            out.append(_high_latency(key, answer.latency_ms, base, answer.why, rules))
    return out


def slow(latency_ms: float, baseline_ms: float) -> bool:
    """Is an answer this slow a latency fault against this baseline?"""
    return latency_ms >= max(2 * baseline_ms, baseline_ms + LATENCY_MARGIN_MS)


def latency_baseline(known: Mapping[str, float], traffic: Traffic) -> dict[str, float]:
    """``known``, plus each entry point first seen answering well (>= 95 %): its latency then."""
    out = dict(known)
    for key, result in traffic.entrypoints.items():
        if key not in out and result.success_rate >= ERROR_RATE_THRESHOLD:
            out[key] = result.latency_ms
    return out


def _high_latency(
    key: str, latency_ms: float, baseline_ms: float, why: str, rules: AlertRules
) -> Condition:
    namespace, service = key.split("/", 1)
    labels = {
        "alertname": "HighRequestLatency",
        "namespace": namespace,
        "service": service,
        "severity": "critical",
    }
    summary = f"{service} answers in {latency_ms:.0f} ms (baseline {baseline_ms:.0f} ms)"
    return Condition(
        labels,
        {"summary": summary, "description": why or "requests are slow"},
        rules.high_latency_s,
    )


def _crash_looping(pod: Mapping[str, Any], rules: AlertRules) -> list[Condition]:
    meta = pod["metadata"]
    out = []
    for cs in pod.get("status", {}).get("containerStatuses") or []:
        if cs.get("state", {}).get("waiting", {}).get("reason") == "CrashLoopBackOff":
            labels = {
                "alertname": "KubePodCrashLooping",
                "container": cs["name"],
                "job": "kube-state-metrics",
                "namespace": meta["namespace"],
                "pod": meta["name"],
                "severity": "warning",
            }
            text = (
                f"Pod {meta['namespace']}/{meta['name']} ({cs['name']}) is in waiting state "
                '(reason: "CrashLoopBackOff").'
            )
            out.append(
                Condition(
                    labels,
                    {
                        "description": text,
                        "summary": "Pod is crash looping.",
                        "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
                    },
                    rules.crash_looping_s,
                )
            )
    return out


def _mismatch(obj: Mapping[str, Any], rules: AlertRules) -> list[Condition]:
    want = (obj.get("spec") or {}).get("replicas", 1)
    have = (obj.get("status") or {}).get("availableReplicas", 0)
    if want == have:
        return []
    meta, kind = obj["metadata"], str(obj["kind"])
    name = (
        "KubeDeploymentReplicasMismatch"
        if kind == "Deployment"
        else "KubeStatefulSetReplicasMismatch"
    )
    labels = {
        "alertname": name,
        kind.lower(): meta["name"],
        "job": "kube-state-metrics",
        "namespace": meta["namespace"],
        "severity": "warning",
    }
    text = (
        f"{kind} {meta['namespace']}/{meta['name']} has not matched the expected number "
        f"of replicas ({have}/{want})."
    )
    return [
        Condition(
            labels,
            {
                "description": text,
                "summary": f"{kind} has not matched the expected number of replicas.",
            },
            rules.replicas_mismatch_s,
        )
    ]


def _target_down(ep: Mapping[str, Any], rules: AlertRules) -> list[Condition]:
    if any(s.get("addresses") for s in ep.get("subsets") or []):
        return []
    meta = ep["metadata"]
    labels = {
        "alertname": "TargetDown",
        "job": meta["name"],
        "namespace": meta["namespace"],
        "service": meta["name"],
        "severity": "warning",
    }
    return [
        Condition(
            labels,
            {
                "description": (
                    f"100% of the {meta['name']} targets in {meta['namespace']} namespace are down."
                ),
                "summary": "One or more targets are unreachable.",
            },
            rules.target_down_s,
        )
    ]


def _gettable(cond: Condition, starts: float, now: float) -> dict[str, Any]:
    expr = cond.labels["alertname"]
    return {
        "annotations": dict(cond.annotations),
        "endsAt": iso_ms(now + RESOLVE_TIMEOUT_S),
        "fingerprint": cond.fingerprint,
        "receivers": [{"name": "default"}],
        "startsAt": iso_ms(starts),
        "status": {"inhibitedBy": [], "mutedBy": [], "silencedBy": [], "state": "active"},
        "updatedAt": iso_ms(now),
        "generatorURL": f"http://127.0.0.1:9090/graph?g0.expr=ALERTS%7Balertname%3D%22{expr}%22%7D&g0.tab=1",
        "labels": dict(sorted(cond.labels.items())),
    }


def fingerprint(labels: Mapping[str, str]) -> str:
    """Prometheus' ``model.LabelSet.Fingerprint``: FNV-1a 64 over sorted name/value pairs."""
    h = 0xCBF29CE484222325
    for name in sorted(labels):
        for part in (name, labels[name]):
            for byte in part.encode() + b"\xff":
                h ^= byte
                h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"
