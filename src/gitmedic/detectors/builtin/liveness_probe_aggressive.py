"""A liveness probe that kills a container for a moment of slowness: restarts under load.

The kubelet restarts a container after ``failureThreshold`` consecutive failed
liveness probes, ``periodSeconds`` apart; a probe fails when no answer comes
within ``timeoutSeconds``. The *kill window* ``periodSeconds x failureThreshold``
is therefore how long a container may be slow (a GC pause, a burst of load)
before it is killed. Kubernetes' defaults give 10 s x 3 = 30 s.

Rules (unset fields take the Kubernetes defaults):

- ``kill-window-short``: the kill window is under 5 s. Critical when the
  container also has no start-up grace (no ``startupProbe`` and an
  ``initialDelaySeconds`` below 5 s): it may be killed before it ever answers,
  and loop in CrashLoopBackOff. A warning when a startup probe or delay covers
  start-up, since it then dies only under load.
- ``single-failure-kills``: ``failureThreshold: 1`` with a longer window; one
  slow answer restarts the container (warning).

The real apps' probes (sock-shop's 3 s x 3, online-boutique's 5 s x 3, and
defaults elsewhere) have windows of 9 s and more and stay silent.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._fields import PlacedContainer, placed_containers
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import JSON, Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="liveness-probe-aggressive",
    description=(
        "A liveness probe restarts its container after less than 5 s of slowness, "
        "or after a single failed probe."
    ),
    kinds=frozenset(
        {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
    ),
    severity=Severity.WARNING,
    remediation=(
        "Restore the liveness probe's timing to its last good values (Kubernetes' defaults are "
        "periodSeconds 10, failureThreshold 3), and cover slow start-up with a startupProbe "
        "or initialDelaySeconds."
    ),
    scope=Scope.BOTH,
    certain_because=(
        "critical only when the kill window is under 5 s with no start-up grace, so a container"
        " slower to answer than that never starts"
    ),
    playbooks=("liveness-probe-aggressive",),
)

MIN_WINDOW_SECONDS = 5
DEFAULTS = {
    "initialDelaySeconds": 0,
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "failureThreshold": 3,
}


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for wl in snapshot.workloads():
        for container in placed_containers(wl):
            probe = mapping(container.body.get("livenessProbe"))
            if probe:
                yield from _judge(wl, container, probe)


def timing(probe: JSON) -> dict[str, int]:
    """The probe's effective timing: its own fields where valid, else the defaults."""
    return {field: _field(probe, field, default) for field, default in DEFAULTS.items()}


def _field(probe: JSON, field: str, default: int) -> int:
    value = probe.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        return default
    # Zero means "unset" for every field but the initial delay (the API's defaulting).
    minimum = 0 if field == "initialDelaySeconds" else 1
    return value if value >= minimum else default


def _judge(wl: Workload, container: PlacedContainer, probe: JSON) -> Iterator[Finding]:
    t = timing(probe)
    window = t["periodSeconds"] * t["failureThreshold"]
    has_grace = (
        bool(mapping(container.body.get("startupProbe")))
        or t["initialDelaySeconds"] >= MIN_WINDOW_SECONDS
    )
    if window < MIN_WINDOW_SECONDS:
        rule, severity = "kill-window-short", Severity.WARNING if has_grace else Severity.CRITICAL
        why = f"after {window}s of failed probes"
    elif t["failureThreshold"] == 1:
        rule, severity = "single-failure-kills", Severity.WARNING
        why = "after a single failed probe"
    else:
        return
    grace = "" if has_grace else "; no startupProbe and no initial delay to cover start-up"
    yield SPEC.finding(
        wl.ref,
        f"{container.name}: the liveness probe restarts the container {why}",
        rule=rule,
        severity=severity,
        evidence=(
            f"livenessProbe periodSeconds={t['periodSeconds']} "
            f"failureThreshold={t['failureThreshold']} timeoutSeconds={t['timeoutSeconds']} "
            f"initialDelaySeconds={t['initialDelaySeconds']}{grace}"
        ),
        params={
            "container": container.name,
            "path": f"{container.path}.livenessProbe",
            "value": {k: probe[k] for k in DEFAULTS if k in probe},
            "effective": t,
            "suggested": {"periodSeconds": 10, "failureThreshold": 3},
        },
    )
