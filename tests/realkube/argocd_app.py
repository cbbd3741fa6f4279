"""online-boutique as a manifest repo that real Argo CD deploys: an Application
(named after the test's namespace) syncs ``apps/online-boutique`` from the
``main`` of the repository the git server serves, automatically.

gitmedic watches it through Argo CD's REST API (``engine.kind: argocd``), with
the token of the bot's Argo CD account; on Kubernetes the bot has the chart's
read-only RBAC and no Role for the engine (the REST API needs none).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.reconciler.sync.argo_rules import assess_application
from gitmedic.reconciler.sync.state import SyncPhase
from tests.realkube.argocd import NAMESPACE as ARGOCD_NAMESPACE
from tests.realkube.argocd import ArgoCD
from tests.realkube.bot_identity import install_bot
from tests.realkube.boutique import wait_for
from tests.realkube.flux import Flux
from tests.realkube.gitops_app import (
    APP,
    SYNC_WAIT_S,
    manifest_repo,
    provide_load_balancer,
    run_loop,
)
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

CONFIG = """version: 1
apps:
  - name: boutique
    path: {app}
    namespace: {namespace}
    engine:
      kind: argocd
      url: {url}
      application: {namespace}
      sync_timeout_s: 240
    oracles:
      window_s: 15
      interval_s: 5
"""


@dataclass(frozen=True)
class ArgoApp:
    tier: Tier
    argocd: ArgoCD
    repo: Path
    namespace: str
    bot: Path  # the bot's kubeconfig (the chart's read-only RBAC)

    def run_once(self, token: str | None = None) -> subprocess.CompletedProcess[str]:
        """``gitmedic run REPO --cluster kube --forge local --once --json``, as the bot,
        with its Argo CD token (or ``token``) in ``$ARGOCD_TOKEN``."""
        env = {"ARGOCD_TOKEN": self.argocd.token if token is None else token}
        return run_loop(self.repo, self.bot, env)

    def application(self) -> dict[str, Any]:
        """The Application as Argo CD records it (read as the admin, not the bot)."""
        return self.argocd.application(self.namespace)

    def wait_synced(self, sha: str) -> None:
        """Until Argo CD reports ``sha`` synced and healthy."""

        def deployed() -> bool:
            return assess_application(self.application(), sha).phase is SyncPhase.DEPLOYED

        wait_for(deployed, f"Argo CD to deploy {sha[:12]}", SYNC_WAIT_S)

    def wait_applied(self, sha: str) -> None:
        """Until Argo CD's last sync operation applied ``sha`` (healthy or not)."""

        def applied() -> bool:
            operation = self.application().get("status", {}).get("operationState") or {}
            result = operation.get("syncResult") or {}
            return operation.get("phase") == "Succeeded" and result.get("revision") == sha

        wait_for(applied, f"Argo CD to apply {sha[:12]}", SYNC_WAIT_S)

    def deployed_revisions(self) -> list[str]:
        """The revisions of Argo CD's sync history, oldest first (``status.history``)."""
        history = self.application().get("status", {}).get("history") or []
        assert isinstance(history, list)
        return [str(entry.get("revision", "")) for entry in history]

    def head(self) -> str:
        return git(self.repo, "rev-parse", "main")


def argo_app(tier: Tier, argocd: ArgoCD, flux: Flux, namespace: str, tmp: Path) -> ArgoApp:
    """The app deployed by Argo CD from Flux's git server, synced and healthy."""
    app = undeployed_app(tier, argocd, namespace, tmp)
    argocd.deploy(namespace, flux.serve(app.repo, namespace), APP, namespace)
    provide_load_balancer(tier, namespace)
    app.wait_synced(app.head())
    return app


def undeployed_app(tier: Tier, argocd: ArgoCD, namespace: str, tmp: Path) -> ArgoApp:
    """The manifest repo and the bot's identity, with no Application yet."""
    repo = manifest_repo(tmp, CONFIG.format(app=APP, namespace=namespace, url=argocd.url))
    engine = ("argocd", ARGOCD_NAMESPACE, namespace)
    bot = install_bot(tier.plane, namespace, tmp, read_secrets=False, engine=engine)
    return ArgoApp(tier, argocd, repo, namespace, bot)
