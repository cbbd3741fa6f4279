"""A ConfigMap, key, Secret, key, PVC or ServiceAccount that a pod spec names but is absent.

The kubelet refuses to start such a container (CreateContainerConfigError), the
mount fails, the pod stays Pending, or the ReplicaSet cannot create pods at all.
References marked ``optional: true`` are honoured, and the implicit ``default``
ServiceAccount always exists.

Rules, one per reference kind: ``configmap-missing``, ``configmap-key-missing``,
``secret-missing``, ``secret-key-missing``, ``pvc-missing``,
``serviceaccount-missing``, ``image-pull-secret-missing``.

Judgement choices, all documented in the finding:
- Secrets are often produced outside plain manifests; a Secret that an
  ExternalSecret, SealedSecret or cert-manager Certificate of the snapshot
  produces counts as present (its keys are then unknown and not judged). In
  desired state a Secret nobody produces is a warning (it may be created out of
  band); in live state it is critical, because the pod really cannot start.
- A missing image pull Secret is a warning: the kubelet still pulls, without
  credentials, which only fails for private images.
- In live state a kind the snapshot holds no object of was not listed (RBAC or
  a partial list), so references to it are not judged rather than all reported.
- In desired state a ConfigMap or Secret (or key) that a workload of the app may
  create at runtime (an install Job, a hook, an init container whose
  ServiceAccount a Role of the app lets create, or update for a key, that
  resource: see ``_creators``) is a warning naming that workload, never critical.
- ConfigMaps the cluster publishes in every namespace: ``kube-root-ca.crt``
  (Kubernetes' root CA publisher: always there, never judged in desired state) and
  ``istio-ca-root-cert`` (istiod, in every namespace of the mesh: a warning saying
  so, since the mesh is outside the app).
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._creators import RBAC_KINDS, creators, service_account
from gitmedic.detectors.builtin._fields import key_path
from gitmedic.detectors.builtin._references import (
    CONFIGMAP,
    PVC,
    SECRET,
    SERVICE_ACCOUNT,
    Reference,
    references,
)
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import WORKLOAD_KINDS, Obj, Snapshot, Workload, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope, Uncertainty

RUNTIME = Uncertainty(
    id="created-at-runtime",
    unseen="a ConfigMap or Secret a Job, hook or init container of the app creates at runtime",
    certain_if="no workload of the app creates it (its ServiceAccount may)",
)

PUBLISHED = Uncertainty(
    id="published-by-the-cluster",
    unseen="a ConfigMap a cluster component publishes in every namespace (istiod's CA)",
    certain_if="the namespace is in no mesh whose control plane publishes it",
)
# ConfigMaps a cluster component writes into every namespace: name -> who, or "" when
# Kubernetes itself does (certain to exist).
_PUBLISHED_CONFIGMAPS = {
    "kube-root-ca.crt": "",
    "istio-ca-root-cert": "istiod publishes it in every namespace of the mesh",
}

SPEC = DetectorSpec(
    id="missing-reference",
    description=(
        "A workload references a ConfigMap, ConfigMap key, Secret, Secret key, "
        "PersistentVolumeClaim or ServiceAccount that does not exist."
    ),
    kinds=frozenset(
        {
            *WORKLOAD_KINDS,
            "ConfigMap",
            "Secret",
            "PersistentVolumeClaim",
            "ServiceAccount",
            "ExternalSecret",
            "SealedSecret",
            "Certificate",
        }
        | RBAC_KINDS
    ),
    severity=Severity.CRITICAL,
    remediation=(
        "Restore the referenced object or key (or the reference's previous name), "
        "or mark the reference optional if the workload can run without it."
    ),
    scope=Scope.BOTH,
    playbooks=("missing-configmap", "configmap-key-dropped", "pvc-claim-broken"),
    uncertain_when=(RUNTIME, PUBLISHED),
)

_API_VERSION = {CONFIGMAP: "v1", SECRET: "v1", PVC: "v1", SERVICE_ACCOUNT: "v1"}
_LABEL = {CONFIGMAP: "configmap", SECRET: "secret", PVC: "pvc", SERVICE_ACCOUNT: "serviceaccount"}
# Kinds whose objects produce a Secret, and where the produced name sits.
_SECRET_PRODUCERS = {
    "ExternalSecret": ("spec", "target", "name"),
    "SealedSecret": ("spec", "template", "metadata", "name"),
    "Certificate": ("spec", "secretName"),
}


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    listed = snapshot.kinds()
    for wl in snapshot.workloads():
        for ref in references(wl):
            if snapshot.live and ref.kind not in listed:
                continue
            finding = _judge(snapshot, wl, ref)
            if finding is not None:
                yield finding


def _judge(snapshot: Snapshot, wl: Workload, ref: Reference) -> Finding | None:
    namespace = wl.obj.namespace
    target = snapshot.get(ref.kind, namespace, ref.name)
    if target is None:
        if ref.optional or (ref.kind == SECRET and _produced_secret(snapshot, namespace, ref.name)):
            return None
        if (
            not snapshot.live
            and _PUBLISHED_CONFIGMAPS.get(ref.name) == ""
            and ref.kind == CONFIGMAP
        ):
            return None  # Kubernetes publishes it in every namespace
        return _finding(snapshot, wl, ref, missing_key=False)
    if ref.key is None or ref.optional or ref.key in _keys(target):
        return None
    return _finding(snapshot, wl, ref, missing_key=True)


def _finding(snapshot: Snapshot, wl: Workload, ref: Reference, *, missing_key: bool) -> Finding:
    rule, severity = _rule(snapshot, ref, missing_key=missing_key)
    what = f"{ref.kind} {ref.name}" + (f" has no key {ref.key}" if missing_key else " is absent")
    note = _runtime_note(snapshot, wl, ref, missing_key=missing_key)
    if note:
        severity = min(severity, Severity.WARNING, key=lambda s: s.rank)
    elif severity is Severity.WARNING and rule == "secret-missing":
        note = "; it may be created out of band (kubectl, a controller outside the app)"
    where = f"{ref.container}: " if ref.container else ""
    params: dict[str, object] = {
        "workload": wl.ref.to_json(),
        "container": ref.container,
        "path": ref.path,
        "via": ref.via,
        "kind": ref.kind,
        "name": ref.name,
    }
    if ref.key is not None:
        params["key"] = ref.key
    if missing_key:
        # Where the key lives in the ConfigMap or Secret, so a fix can restore it.
        params["data_path"] = key_path("data", ref.key or "")
    return SPEC.finding(
        wl.ref,
        f"{where}{what} ({ref.via} reference){note}",
        rule=rule,
        severity=severity,
        evidence=f"{ref.path} names {ref.kind} {ref.name}"
        + (f" key {ref.key}" if ref.key else "")
        + (f"; the {ref.kind} holds {sorted(_keys_of(snapshot, wl, ref))}" if missing_key else ""),
        related=[Resource(ref.kind, wl.obj.namespace, ref.name, _API_VERSION[ref.kind])],
        params=params,
    )


def _rule(snapshot: Snapshot, ref: Reference, *, missing_key: bool) -> tuple[str, Severity]:
    if ref.via == "imagePullSecrets":
        return "image-pull-secret-missing", Severity.WARNING
    rule = f"{_LABEL[ref.kind]}-{'key-missing' if missing_key else 'missing'}"
    if ref.kind == SECRET and not missing_key and not snapshot.live:
        return rule, Severity.WARNING
    return rule, Severity.CRITICAL


def _runtime_note(snapshot: Snapshot, wl: Workload, ref: Reference, *, missing_key: bool) -> str:
    """Why the reference may resolve at runtime, naming the workload that may make it; or ""."""
    if snapshot.live or ref.via == "imagePullSecrets":
        return ""
    publisher = _PUBLISHED_CONFIGMAPS.get(ref.name) if ref.kind == CONFIGMAP else None
    if publisher and not missing_key:
        return f"; {publisher}: missing only if {PUBLISHED.certain_if}"
    verb = "update" if missing_key else "create"
    verbs = ("update", "patch") if missing_key else ("create",)
    made_by = creators(snapshot, wl, ref.kind, verbs=verbs, via=ref.via)
    if not made_by:
        return ""
    return (
        f"; {made_by[0].ref} may {verb} it at runtime (its ServiceAccount "
        f"{service_account(made_by[0])} may {verb} {ref.kind.lower()}s): missing only if no "
        "workload of the app does"
    )


def _keys(obj: Obj) -> set[str]:
    fields = ("data", "binaryData") if obj.kind == CONFIGMAP else ("data", "stringData")
    return {str(k) for f in fields for k in mapping(obj.body.get(f))}


def _keys_of(snapshot: Snapshot, wl: Workload, ref: Reference) -> set[str]:
    target = snapshot.get(ref.kind, wl.obj.namespace, ref.name)
    return _keys(target) if target is not None else set()


def _produced_secret(snapshot: Snapshot, namespace: str, name: str) -> bool:
    produced = snapshot.derived("missing-reference.produced-secrets", lambda: _producers(snapshot))
    return (namespace, name) in produced


def _producers(snapshot: Snapshot) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for kind, path in _SECRET_PRODUCERS.items():
        for obj in snapshot.of_kind(kind):
            value: object = obj.body
            for part in path:
                value = mapping(value).get(part)
            # ExternalSecret and SealedSecret default to their own name.
            name = value if isinstance(value, str) and value else obj.name
            out.add((obj.namespace, name))
    return out
