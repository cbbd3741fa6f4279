"""gitmedic's identity on the real cluster: a ServiceAccount bound to a read-only
ClusterRole whose rules come from the detector registry (the kinds the detectors
read, spelled as the live loader lists them), as the Helm chart renders it, and
a kubeconfig holding a token the API server issued for it (TokenRequest).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gitmedic.detectors.registry import Registry
from gitmedic.reconciler.live import LIST_CALLS
from tests.realkube.control_plane import ControlPlane, write_kubeconfig

READ_ONLY = ["get", "list", "watch"]
FLUX_RULE: dict[str, object] = {
    "apiGroups": ["kustomize.toolkit.fluxcd.io"],
    "resources": ["kustomizations"],
    "verbs": READ_ONLY,
}


def registry_kinds(registry: Registry) -> set[str]:
    """The kinds the detectors read that the live loader lists (the others, such as
    SealedSecret or Certificate, are judged in the desired state only)."""
    listed = {call.kind for call in LIST_CALLS}
    return {kind for detector in registry for kind in detector.spec.kinds} & listed


def read_only_rules(kinds: Iterable[str]) -> list[dict[str, object]]:
    """One rule per API group, get/list/watch on the plurals of ``kinds``."""
    calls = {call.kind: call for call in LIST_CALLS}
    by_group: dict[str, set[str]] = {}
    for kind in kinds:
        version = calls[kind].api_version
        group = version.rsplit("/", 1)[0] if "/" in version else ""
        by_group.setdefault(group, set()).add(calls[kind].plural)
    return [
        {"apiGroups": [group], "resources": sorted(plurals), "verbs": READ_ONLY}
        for group, plurals in sorted(by_group.items())
    ]


def bind_bot(
    plane: ControlPlane, namespace: str, rules: list[dict[str, object]], folder: Path
) -> Path:
    """A ServiceAccount ``gitmedic`` in ``namespace`` bound to ``rules``; its kubeconfig."""
    role = f"gitmedic-{namespace}"
    subject = {"kind": "ServiceAccount", "name": "gitmedic", "namespace": namespace}
    plane.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "gitmedic", "namespace": namespace},
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": role},
                "rules": rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "subjects": [subject],
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
            },
        ]
    )
    token = plane.kubectl("create", "token", "gitmedic", "-n", namespace, "--duration=2h")
    path = folder / f"bot-{namespace}.kubeconfig"
    write_kubeconfig(path, plane.server, plane.pki.ca, token.strip())
    return path
