"""A Service whose selector matches the pods of more than one workload.

Its endpoints then mix pods of different workloads, and a share of the requests
lands on pods that serve something else (SREGym's polluted selector). Severity
follows how different the workloads are: when their containers run different
images they are different programs and the mix is certainly wrong (critical);
when they run the same images it may be a deliberate variant or canary (warning).

The params name the workload the Service most likely fronts (the one named like
the Service, if any) and the labels only that workload carries, so a fix can
narrow the selector without guessing.

Not pollution: a workload scaled to zero runs no pod (an Argo Rollout's
``workloadRef`` Deployment), and a Service that spans several versions of one
app on purpose (``app: reviews`` over reviews-v1/v2/v3, each with its own
``version`` label: the service-mesh pattern, a mesh routes by that label) is an
info saying so. Nor certain: workloads of one name and different kinds (a Deployment
and the legacy ReplicationController it replaces, kept side by side in the repo) are
alternative definitions of one workload, which are seldom applied together: a warning.
Workloads of one kind and name are one object (a Deployment of ``extensions/v1beta1``
and of ``apps/v1`` in two variants of a folder): whichever is applied replaces the other,
so no mix and no finding. A headless Service (``clusterIP: None``) over the members
of one app (StatefulSets that name it their ``serviceName``, or shards and roles that
run one image under one app name: redis master and replicas, kube-state-metrics
shards) addresses each pod by its own DNS name and balances nothing: an info. A
headless Service that a StatefulSet names as its ``serviceName`` and that also selects
other workloads (Loki's ``loki-headless`` over the single binary and its gateway) gives
each StatefulSet pod its DNS name whatever else it selects; only a client resolving the
Service's own name sees the mix, which the manifests do not show: a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gitmedic.detectors.builtin._services import selected_workloads, selecting_services
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty

# Labels by which a service mesh tells versions of one app apart, and those naming the app.
VERSION_LABELS = ("version", "app.kubernetes.io/version")
APP_LABELS = ("app", "app.kubernetes.io/name", "k8s-app")
VERSIONS = Uncertainty(
    id="versions-of-one-app",
    unseen="whether the mix is deliberate: the workloads are versions of one app "
    "(distinct values of a version label) that a service mesh routes between",
    certain_if="the workloads are not versions of one app (no distinct version label)",
)

ALTERNATIVES = Uncertainty(
    id="alternatives-of-one-workload",
    unseen="whether both definitions are applied: workloads of one name and different "
    "kinds (a Deployment beside the ReplicationController it replaced) are alternatives",
    certain_if="the workloads have different names, so both run",
)

MEMBERS = Uncertainty(
    id="members-behind-a-headless-service",
    unseen="whether clients address each pod by name: a headless Service over the members "
    "of one app (the StatefulSets it governs, or shards running one image) load-balances "
    "nothing",
    certain_if="the Service load-balances (it has a cluster IP), so requests mix the workloads",
)

GOVERNING = Uncertainty(
    id="governing-headless-service",
    unseen="whether any client resolves the Service's own name: a headless Service that a "
    "StatefulSet names as its serviceName gives each of its pods a DNS name, whatever else "
    "the Service selects",
    certain_if="the Service load-balances (it has a cluster IP), so requests mix the workloads",
)

SPEC = DetectorSpec(
    id="service-selector-polluted",
    description="A Service's selector matches the pods of more than one workload.",
    kinds=frozenset({"Service", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"}),
    severity=Severity.CRITICAL,
    remediation=(
        "Narrow the selector (restore the label it lost) so it matches only the pods of the "
        "workload the Service fronts."
    ),
    scope=Scope.BOTH,
    playbooks=("service-selector-polluted",),
    uncertain_when=(VERSIONS, ALTERNATIVES, MEMBERS, GOVERNING),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for svc, selector in selecting_services(snapshot):
        selected = selected_workloads(snapshot, svc, selector)
        workloads = _one_per_object(w for w in selected if w.replicas != 0)
        if len(workloads) < 2:
            continue
        images = {_images(w) for w in workloads}
        intended = next((w for w in workloads if w.ref.name == svc.name), None)
        params: dict[str, object] = {
            "selector": selector,
            "workloads": [w.ref.to_json() for w in workloads],
        }
        evidence = f"selector {_fmt(selector)} matches {', '.join(str(w.ref) for w in workloads)}"
        if intended is not None:
            own = _own_labels(intended, [w for w in workloads if w is not intended])
            params["intended_workload"] = intended.ref.to_json()
            params["distinguishing_labels"] = own
            evidence += f"; only {intended.ref} carries {_fmt(own) or 'no extra label'}"
        severity, summary = _verdict(svc, workloads, images)
        yield SPEC.finding(
            svc.ref,
            summary,
            severity=severity,
            evidence=evidence,
            related=[w.ref for w in workloads],
            params=params,
        )


def _verdict(
    svc: Obj, workloads: list[Workload], images: set[tuple[str, ...]]
) -> tuple[Severity, str]:
    summary = f"Service {svc.name} selects pods of {len(workloads)} workloads"
    if _members_behind_headless(svc, workloads, images):
        return Severity.INFO, (
            f"{summary}, members of one app behind a headless Service (each pod addressed "
            "by its own DNS name; nothing load-balances across them)"
        )
    governed = _governed_by_headless(svc, workloads)
    if governed:
        return Severity.WARNING, (
            f"{summary}, behind the headless Service that {', '.join(governed)} names as its "
            "serviceName (its pods keep their own DNS names; a mix for clients resolving the "
            "Service's name)"
        )
    versions = _versions(workloads)
    if versions:
        return Severity.INFO, (
            f"{summary}, versions {', '.join(versions)} of one app (deliberate when a service "
            "mesh routes by version)"
        )
    if len({w.ref.name for w in workloads}) == 1:
        kinds = " and ".join(sorted(w.ref.kind for w in workloads))
        return Severity.WARNING, (
            f"{summary}: {kinds} {workloads[0].ref.name}, alternative definitions of one "
            "workload (a mix only if both are applied)"
        )
    return (Severity.CRITICAL if len(images) > 1 else Severity.WARNING), summary


def _one_per_object(workloads: Iterable[Workload]) -> list[Workload]:
    """Workloads by kind and name: two API versions of one Deployment are one object."""
    out: dict[tuple[str, str], Workload] = {}
    for wl in sorted(workloads, key=lambda w: w.ref):
        out.setdefault((wl.ref.kind, wl.ref.name), wl)
    return list(out.values())


def _members_behind_headless(
    svc: Obj, workloads: list[Workload], images: set[tuple[str, ...]]
) -> bool:
    if svc.spec.get("clusterIP") != "None":
        return False
    governed = all(
        w.ref.kind == "StatefulSet" and w.obj.spec.get("serviceName") == svc.name for w in workloads
    )
    one_app = len(images) == 1 and any(_one_value(workloads, key) for key in APP_LABELS)
    return governed or one_app


def _governed_by_headless(svc: Obj, workloads: list[Workload]) -> list[str]:
    """The StatefulSets among ``workloads`` whose serviceName is the headless ``svc``."""
    if svc.spec.get("clusterIP") != "None":
        return []
    return [
        str(w.ref)
        for w in workloads
        if w.ref.kind == "StatefulSet" and w.obj.spec.get("serviceName") == svc.name
    ]


def _versions(workloads: list[Workload]) -> list[str]:
    """The version-label values of the workloads when they are versions of one app (one
    app-name label value, each its own version); else []."""
    if not any(_one_value(workloads, key) for key in APP_LABELS):
        return []
    for key in VERSION_LABELS:
        values = [w.template_labels.get(key) for w in workloads]
        if all(isinstance(v, str) and v for v in values) and len(set(values)) == len(values):
            return sorted(str(v) for v in values)
    return []


def _one_value(workloads: list[Workload], key: str) -> bool:
    values = {str(w.template_labels.get(key, "")) for w in workloads}
    return len(values) == 1 and "" not in values


def _images(wl: Workload) -> tuple[str, ...]:
    return tuple(sorted(str(c.body.get("image", "")) for c in wl.containers(init=False)))


def _own_labels(wl: Workload, others: list[Workload]) -> dict[str, str]:
    """Template labels of ``wl`` that no other workload shares (key and value)."""
    return {
        str(k): str(v)
        for k, v in sorted(wl.template_labels.items())
        if all(o.template_labels.get(k) != v for o in others)
    }


def _fmt(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
