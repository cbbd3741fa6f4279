"""Pod health with gitops-engine's rules.

A long-running pod (restartPolicy Always, or a non-hook pod annotated
``argocd.argoproj.io/ignore-restart-policy: "true"``) is Degraded as soon as a
container waits for a reason that spells an error (``Err*``, ``*Error``,
``*BackOff``), is Healthy when Ready, and Degraded when not Ready after a
container has terminated before. Pods with a finite life (OnFailure/Never,
typically sync hooks) are Progressing while they run, so a hook is never failed
early.
"""

from __future__ import annotations

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus

IGNORE_RESTART_POLICY = "argocd.argoproj.io/ignore-restart-policy"
ARGO_HOOK = "argocd.argoproj.io/hook"
HELM_HOOK = "helm.sh/hook"


def is_hook(obj: JSON) -> bool:
    """An Argo CD or Helm hook (a hook typed only ``Skip`` is not one; nor a CRD install)."""
    notes = f.annotations_of(obj)
    if ARGO_HOOK in notes:
        types = [t.strip() for t in str(notes[ARGO_HOOK]).split(",") if t.strip()]
        return types != ["Skip"]
    return HELM_HOOK in notes and notes[HELM_HOOK] != "crd-install"


def _long_running(obj: JSON) -> bool:
    # An absent restartPolicy is the API's default, Always (gitops-engine sees "" there
    # only for objects that skipped API defaulting, such as hand-written ones).
    policy = f.string(obj, "spec", "restartPolicy") or "Always"
    ignore = f.annotations_of(obj).get(IGNORE_RESTART_POLICY) == "true"
    return policy == "Always" or (ignore and not is_hook(obj))


def _waiting_errors(obj: JSON) -> list[str] | None:
    messages = []
    for status in f.items(obj, "status", "containerStatuses"):
        waiting = f.mapping(status, "state", "waiting")
        reason = f.string(waiting, "reason")
        if reason.startswith("Err") or reason.endswith(("Error", "BackOff")):
            messages.append(f.string(waiting, "message"))
    return messages or None


def _fail_message(status: JSON) -> str:
    terminated = f.mapping(status, "state", "terminated")
    if f.mapping(status, "state").get("terminated") is None:
        return ""
    if message := f.string(terminated, "message"):
        return message
    if f.string(terminated, "reason") == "OOMKilled":
        return "OOMKilled"
    if code := f.integer(terminated, "exitCode"):
        return f'container "{f.string(status, "name")}" failed with exit code {code}'
    return ""


def _failed(obj: JSON, message: str) -> Health:
    if message:
        return Health(HealthStatus.DEGRADED, message)
    statuses = f.items(obj, "status", "initContainerStatuses")
    statuses += f.items(obj, "status", "containerStatuses")
    for status in statuses:
        if text := _fail_message(status):
            return Health(HealthStatus.DEGRADED, text)
    return Health(HealthStatus.DEGRADED, "")


def _is_ready(obj: JSON) -> bool:
    ready = f.condition(obj, "Ready")
    return ready is not None and ready.get("status") == "True"


def _running(obj: JSON, message: str) -> Health:
    if not _long_running(obj):
        # A finite-life pod (usually a hook) is never Healthy while it still runs.
        return Health(HealthStatus.PROGRESSING, message)
    if _is_ready(obj):
        return Health(HealthStatus.HEALTHY, message)
    for status in f.items(obj, "status", "containerStatuses"):
        if f.mapping(status, "lastState").get("terminated") is not None:
            return Health(HealthStatus.DEGRADED, message)
    return Health(HealthStatus.PROGRESSING, message)


def pod_health(obj: JSON) -> Health:
    if _long_running(obj) and (errors := _waiting_errors(obj)) is not None:
        return Health(HealthStatus.DEGRADED, ", ".join(errors))
    phase = f.string(obj, "status", "phase")
    message = f.string(obj, "status", "message")
    if phase == "Pending":
        return Health(HealthStatus.PROGRESSING, message)
    if phase == "Succeeded":
        return Health(HealthStatus.HEALTHY, message)
    if phase == "Failed":
        return _failed(obj, message)
    if phase == "Running":
        return _running(obj, message)
    return Health(HealthStatus.UNKNOWN, message)
