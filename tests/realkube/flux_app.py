"""online-boutique as a manifest repo that real Flux deploys: a Kustomization
(named after the test's namespace) applies ``apps/online-boutique`` from the
``main`` of the repository the git server serves (:mod:`tests.realkube.gitops_app`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.reconciler.sync.flux_rules import assess_kustomization
from gitmedic.reconciler.sync.state import SyncPhase
from tests.realkube.bot_identity import install_bot
from tests.realkube.boutique import wait_for
from tests.realkube.flux import NAMESPACE as FLUX_NAMESPACE
from tests.realkube.flux import Flux
from tests.realkube.gitops_app import (
    APP as APP,  # the Flux loop's tests read it from here
)
from tests.realkube.gitops_app import (
    SYNC_WAIT_S,
    manifest_repo,
    provide_load_balancer,
    run_loop,
)
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

REVISION = "kustomize.toolkit.fluxcd.io/revision"
CONFIG = """version: 1
apps:
  - name: boutique
    path: {app}
    namespace: {namespace}
    engine:
      kind: flux
      application: {namespace}
      namespace: {flux}
      sync_timeout_s: 240
    oracles:
      window_s: 15
      interval_s: 5
"""


@dataclass(frozen=True)
class FluxApp:
    tier: Tier
    repo: Path
    namespace: str
    bot: Path  # the bot's kubeconfig (the chart's RBAC: read-only, and its Kustomization)

    def run_once(self) -> subprocess.CompletedProcess[str]:
        """``gitmedic run REPO --cluster kube --forge local --once --json``, as the bot."""
        return run_loop(self.repo, self.bot)

    def kustomization(self) -> dict[str, Any]:
        return self.tier.plane.get_json("kustomization", self.namespace, "-n", FLUX_NAMESPACE)

    def wait_synced(self, sha: str) -> None:
        """Until Flux reports ``sha`` applied and healthy (Ready=True at that revision)."""

        def deployed() -> bool:
            return assess_kustomization(self.kustomization(), sha).phase is SyncPhase.DEPLOYED

        wait_for(deployed, f"Flux to deploy {sha[:12]}", SYNC_WAIT_S)

    def wait_applied(self, sha: str) -> None:
        """Until Flux has applied ``sha`` (healthy or not: a fault's commit is not)."""

        def applied() -> bool:
            status = self.kustomization().get("status") or {}
            assert isinstance(status, dict)
            return str(status.get("lastAttemptedRevision", "")).endswith(sha)

        wait_for(applied, f"Flux to apply {sha[:12]}", SYNC_WAIT_S)

    def healthy_revisions(self) -> set[str]:
        """The revisions Flux applied and found healthy, from its Kubernetes Events
        (each carries the revision it is about; the first of a kind is never folded)."""
        events = self.tier.plane.get_json("events", "-n", FLUX_NAMESPACE)["items"]
        assert isinstance(events, list)
        return {
            str((e["metadata"].get("annotations") or {}).get(REVISION, ""))
            for e in events
            if e["involvedObject"]["kind"] == "Kustomization"
            and e["involvedObject"]["name"] == self.namespace
            and str(e.get("message", "")).startswith("Health check passed")
        }

    def head(self) -> str:
        return git(self.repo, "rev-parse", "main")


def flux_app(tier: Tier, flux: Flux, namespace: str, tmp: Path) -> FluxApp:
    repo = manifest_repo(tmp, CONFIG.format(app=APP, namespace=namespace, flux=FLUX_NAMESPACE))
    url = flux.serve(repo, namespace)
    flux.deploy(namespace, url, APP, namespace)
    # the chart's defaults (no Secrets) with Flux as the engine: a Role on this one Kustomization
    engine = ("flux", FLUX_NAMESPACE, namespace)
    bot = install_bot(tier.plane, namespace, tmp, read_secrets=False, engine=engine)
    app = FluxApp(tier, repo, namespace, bot)
    provide_load_balancer(tier, namespace)
    app.wait_synced(app.head())
    return app
