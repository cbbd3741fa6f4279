"""Containers that keep crashing: CrashLoopBackOff, with the reason of the last crash.

A container is crash-looping when kubelet backs off restarting it
(``waiting.reason == CrashLoopBackOff``), or when it is down after a failed run
and has already been restarted at least twice (the moment between two
back-offs, which is as persistent as the back-off itself). A restartPolicy of
Never is a Job-style pod that fails once, not a loop. The rule is
``oom-killed`` when the last run ended OOMKilled (the memory limit is too
small for the workload), ``crashloop`` otherwise. Init containers that crash
are left to ``pod-init-stuck``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._pods import ContainerState, Group, grouped, pods_summary
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import JSON, Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="pod-crashloop",
    description="A container restarts over and over (CrashLoopBackOff), e.g. Error or OOMKilled.",
    kinds=frozenset({"Pod", "Event", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Read the last termination reason: OOMKilled -> raise the memory limit to the last "
        "known-good value; Error -> restore the command, args, env or image of the last "
        "working revision."
    ),
    scope=Scope.LIVE,
    certain_because=("read from the pod's live status (CrashLoopBackOff)"),
    playbooks=(
        "bad-image",
        "wrong-command",
        "env-missing",
        "memory-limit-too-small",
        "liveness-probe-wrong",
        # Runtime causes: escalate with evidence, never a fix PR...
        "database-auth-revoked",
        "cache-password-changed",
        "poison-records",
        # ...unless a runtime lever mitigates it (bot/responder/levers)
        "memory-working-set-grew",
        "image-ran-healthy",
    ),
)
MIN_RESTARTS = 2  # a terminated container restarted this often is looping


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for group in grouped(snapshot, _rule, init=False):
        yield _finding(group)


def _rule(state: ContainerState) -> str | None:
    if not _crashing(state):
        return None
    return "oom-killed" if _last(state).get("reason") == "OOMKilled" else "crashloop"


def _crashing(state: ContainerState) -> bool:
    if state.waiting.get("reason") == "CrashLoopBackOff":
        return True
    if state.pod.spec.get("restartPolicy") == "Never":
        return False
    failed = state.terminated and state.terminated.get("exitCode") not in (0, None)
    return bool(failed) and state.restarts >= MIN_RESTARTS


def _finding(group: Group) -> Finding:
    last_reasons = sorted({str(_last(s).get("reason") or "unknown") for s in group.states})
    exit_codes = sorted({c for s in group.states if isinstance(c := _last(s).get("exitCode"), int)})
    first = group.first
    what = "is OOMKilled and restarting" if group.rule == "oom-killed" else "is crash-looping"
    reason = str(first.waiting.get("reason") or first.terminated.get("reason") or "")
    evidence = (
        f"pods {pods_summary(group.states)}; state {reason or 'terminated'}; last termination "
        f"{'/'.join(last_reasons)} with exit code {'/'.join(map(str, exit_codes)) or '?'}"
    )
    message = str(first.waiting.get("message") or _last(first).get("message") or "")
    if message:
        evidence += f"; {message.strip()[:300]}"
    return SPEC.finding(
        group.workload,
        f"container {group.container} {what} ({len(group.pods)} pod(s))",
        rule=group.rule,
        evidence=evidence,
        related=group.pods,
        params={
            "container": group.container,
            "container_field": "containers",
            "reason": "CrashLoopBackOff",
            "last_termination_reason": last_reasons[0] if len(last_reasons) == 1 else last_reasons,
            "exit_codes": exit_codes,
        },
    )


def _last(state: ContainerState) -> JSON:
    """The most recent termination: the previous run's, or the current one's."""
    return state.last_terminated or state.terminated
