"""Who in the app may create a ConfigMap or Secret at runtime: RBAC read from the manifests.

Install Jobs, Helm and Argo CD hooks and init containers often create the
Secret (or ConfigMap) a workload references: a certificate generator, a
password bootstrapper. The manifests then lack it, yet the app works. The rule,
precise enough that a plain reference to something nobody could create stays
critical: a Job, CronJob or bare Pod of the app (install Jobs, hooks), or a
workload with init containers, *may create* objects of a resource in a
namespace when its pods' ServiceAccount is a subject of a RoleBinding in that
namespace, or of a ClusterRoleBinding, whose Role or ClusterRole has a rule
granting one of the verbs on that resource (``""`` or ``*`` API group,
the resource or ``*``, the verb or ``*``). A workload counts for its own
references only through an init container, and only for references made by
``env``/``envFrom`` (a volume must exist before any container starts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, Workload, as_list, mapping

RBAC_KINDS = frozenset({"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"})
_RESOURCE = {"ConfigMap": "configmaps", "Secret": "secrets"}
# What bootstraps an app: Jobs (install and hook Jobs), CronJobs, bare Pods (hooks).
_RUN_ONCE = frozenset({"Job", "CronJob", "Pod"})
# Kubernetes' default user-facing ClusterRoles exist in every cluster, so a binding to
# one needs no ClusterRole in the manifests (what they grant on these two resources).
_WRITE = ["create", "update", "patch", "delete"]
_DEFAULT_CLUSTER_ROLES: dict[str, list[JSON]] = {
    "cluster-admin": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    **{
        name: [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": _WRITE}]
        for name in ("admin", "edit")
    },
}


@dataclass(frozen=True)
class Grant:
    """A ServiceAccount may ``verbs`` on ``resource`` in ``namespace`` ("" = every one)."""

    account: tuple[str, str]  # (namespace, name); name "" = every account of that namespace
    namespace: str
    resource: str
    verbs: frozenset[str]


def creators(
    snapshot: Snapshot, wl: Workload, kind: str, *, verbs: Iterable[str], via: str
) -> list[Workload]:
    """Workloads of the app that may create (``verbs``) a ``kind`` in ``wl``'s namespace."""
    resource = _RESOURCE.get(kind)
    if resource is None:
        return []
    wanted = frozenset(verbs)
    namespace = wl.obj.namespace
    out = []
    for other in snapshot.workloads():
        if other.ref == wl.ref and not (_has_init(wl) and via in ("env", "envFrom")):
            continue
        if other.obj.kind not in _RUN_ONCE and not _has_init(other):
            continue  # a long-running controller's writes are its own business
        if _may(snapshot, other, namespace, resource, wanted):
            out.append(other)
    return out


def service_account(wl: Workload) -> str:
    for field in ("serviceAccountName", "serviceAccount"):
        name = wl.pod_spec.get(field)
        if isinstance(name, str) and name:
            return name
    return "default"


def _has_init(wl: Workload) -> bool:
    return bool(as_list(wl.pod_spec.get("initContainers")))


def _may(
    snapshot: Snapshot, wl: Workload, namespace: str, resource: str, verbs: frozenset[str]
) -> bool:
    account = (wl.obj.namespace, service_account(wl))
    for grant in snapshot.derived("creators.grants", lambda: list(_grants(snapshot))):
        if grant.namespace not in ("", namespace) or grant.resource not in (resource, "*"):
            continue
        if grant.account not in (account, (account[0], ""), ("", "")):
            continue
        if grant.verbs & verbs or "*" in grant.verbs:
            return True
    return False


def _grants(snapshot: Snapshot) -> Iterable[Grant]:
    for binding in snapshot.of_kind("RoleBinding") + snapshot.of_kind("ClusterRoleBinding"):
        rules = _rules(snapshot, binding)
        scope = binding.namespace if binding.kind == "RoleBinding" else ""
        for account in _accounts(binding):
            for rule in rules:
                if not {"", "*"} & {str(g) for g in as_list(rule.get("apiGroups"))}:
                    continue
                verbs = frozenset(str(v) for v in as_list(rule.get("verbs")))
                for resource in as_list(rule.get("resources")):
                    yield Grant(account, scope, str(resource), verbs)


def _rules(snapshot: Snapshot, binding: Obj) -> list[JSON]:
    """The rules of the Role or ClusterRole a binding grants ([] when it names none)."""
    ref = mapping(binding.body.get("roleRef"))
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    role = None
    if kind == "ClusterRole":
        role = snapshot.get("ClusterRole", "", name)
        if role is None:
            return _DEFAULT_CLUSTER_ROLES.get(name, [])
    elif kind == "Role" and binding.kind == "RoleBinding":
        role = snapshot.get("Role", binding.namespace, name)
    return [mapping(r) for r in as_list(role.body.get("rules"))] if role else []


def _accounts(binding: Obj) -> Iterable[tuple[str, str]]:
    """(namespace, name) of the ServiceAccounts a binding names; name "" = all of a namespace,
    ("", "") = every ServiceAccount (the ``system:serviceaccounts`` group)."""
    for subject in map(mapping, as_list(binding.body.get("subjects"))):
        yield from _account(subject, binding.namespace)


def _account(subject: JSON, default_namespace: str) -> Iterable[tuple[str, str]]:
    kind, name = subject.get("kind"), str(subject.get("name", ""))
    if kind == "ServiceAccount" and name:
        yield str(subject.get("namespace") or default_namespace), name
    elif kind == "Group" and name == "system:serviceaccounts":
        yield "", ""
    elif kind == "Group" and name.startswith("system:serviceaccounts:"):
        yield name.removeprefix("system:serviceaccounts:"), ""
