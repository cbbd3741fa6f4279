"""gitmedic's identity on the real cluster: a ServiceAccount bound to the read-only
ClusterRole the Helm chart renders (its rules are ``charts/gitmedic/files/
clusterrole-rules.yaml``, generated from the detector registry by
``gitmedic.bot.rbac``: ``rules``, plus ``secretRules`` with ``rbac.readSecrets``),
and a kubeconfig holding a token the API server issued for it (TokenRequest).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.realkube.control_plane import ControlPlane, write_kubeconfig

CHART_RULES = Path(__file__).parents[2] / "charts" / "gitmedic" / "files" / "clusterrole-rules.yaml"
FLUX_RULE: dict[str, Any] = {
    "apiGroups": ["kustomize.toolkit.fluxcd.io"],
    "resources": ["kustomizations"],
    "verbs": ["get", "list", "watch"],
}


def chart_rules(*, read_secrets: bool) -> list[dict[str, Any]]:
    """The chart's ClusterRole rules; Secrets only when the chart is asked to read them."""
    data = yaml.safe_load(CHART_RULES.read_text())
    return [*data["rules"], *(data["secretRules"] if read_secrets else [])]


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
