"""gitmedic's identity on the real cluster, as the Helm chart installs it:
``helm template charts/gitmedic`` renders the ServiceAccount, the read-only
ClusterRole (its rules are ``charts/gitmedic/files/clusterrole-rules.yaml``,
generated from the detector registry: ``rules`` and ``clusterRules``, plus ``secretRules`` with
``rbac.readSecrets``), its binding, and with ``engine.kind: flux`` the Role on the
app's one Kustomization. Those objects are applied as rendered, and the bot's
kubeconfig holds a token the API server issued for the rendered ServiceAccount
(TokenRequest).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.realkube.control_plane import ControlPlane, write_kubeconfig
from tests.support.tools import ROOT, tool_path

CHART = ROOT / "charts" / "gitmedic"
CHART_RULES = CHART / "files" / "clusterrole-rules.yaml"
# README's install (a GitHub App); each test sets the engine and rbac.readSecrets
DEFAULT_VALUES = CHART / "ci" / "app-argocd-cr-values.yaml"
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def chart_rules(*, read_secrets: bool) -> list[dict[str, Any]]:
    """The chart's ClusterRole rules; Secrets only when the chart is asked to read them."""
    data = yaml.safe_load(CHART_RULES.read_text())
    return [*data["rules"], *data["clusterRules"], *(data["secretRules"] if read_secrets else [])]


def render_chart(
    namespace: str, *settings: str, values: Path | None = None
) -> list[dict[str, Any]]:
    """``helm template`` of the chart as release ``gm-<namespace>`` in ``namespace``
    (the release name keeps the cluster-scoped objects of two tests apart)."""
    args = [tool_path("helm"), "template", f"gm-{namespace}", str(CHART), "--namespace", namespace]
    args += ["--values", str(values or DEFAULT_VALUES)]
    for setting in settings:
        args += ["--set", setting]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"helm template: {done.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def install_bot(
    plane: ControlPlane,
    namespace: str,
    folder: Path,
    *,
    read_secrets: bool,
    engine: tuple[str, str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> Path:
    """The chart's RBAC for the bot in ``namespace``; the bot's kubeconfig.
    ``engine`` (kind, namespace, application) is the app's GitOps engine as the
    chart's ``engine`` values: flux and argocd-cr get a Role on that one object,
    argocd (the REST API) none; without it the engine is ``none``. ``extra``: more
    ``--set`` settings (``shards.enabled=true`` adds the Lease Role)."""
    settings = [f"rbac.readSecrets={str(read_secrets).lower()}"]
    if engine:
        kind, engine_namespace, name = engine
        settings += [f"engine.kind={kind}", f"engine.namespace={engine_namespace}"]
        settings.append(f"engine.application={name}")
    else:
        settings.append("engine.kind=none")
    settings += extra
    rbac = [o for o in render_chart(namespace, *settings) if o["kind"] in RBAC_KINDS]
    plane.apply(rbac)
    [account] = [o["metadata"]["name"] for o in rbac if o["kind"] == "ServiceAccount"]
    token = plane.kubectl("create", "token", account, "-n", namespace, "--duration=2h")
    path = folder / f"bot-{namespace}.kubeconfig"
    write_kubeconfig(path, plane.server, plane.pki.ca, token.strip())
    return path
