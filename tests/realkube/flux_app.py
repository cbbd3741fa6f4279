"""online-boutique as a manifest repo that real Flux deploys: the repo the local
forge merges into is the one the git server serves, and a Kustomization (named
after the test's namespace) applies ``apps/online-boutique`` from its ``main``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.reconciler.sync.flux_rules import assess_kustomization
from gitmedic.reconciler.sync.state import SyncPhase
from gitmedic.sim.faults.git import init_repo
from tests.realkube.bot_identity import install_bot
from tests.realkube.boutique import MANIFEST, gitmedic, wait_for
from tests.realkube.flux import NAMESPACE as FLUX_NAMESPACE
from tests.realkube.flux import Flux
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

APP = "apps/online-boutique"
SYNC_WAIT_S = 240.0
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
        return gitmedic(
            "run",
            str(self.repo),
            "--cluster",
            "kube",
            "--forge",
            "local",
            "--once",
            "--json",
            "--interval",
            "5",
            "--settle",
            "10",
            kubeconfig=self.bot,
            timeout_s=900,
        )

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
    repo = tmp / "repo"
    (repo / APP).mkdir(parents=True)
    shutil.copy(MANIFEST, repo / APP / MANIFEST.name)
    (repo / ".gitmedic").mkdir()
    config = CONFIG.format(app=APP, namespace=namespace, flux=FLUX_NAMESPACE)
    (repo / ".gitmedic" / "config.yaml").write_text(config)
    init_repo(repo)
    url = flux.serve(repo, namespace)
    flux.deploy(namespace, url, APP, namespace)
    # the chart's defaults (no Secrets) with Flux as the engine: a Role on this one Kustomization
    engine = (FLUX_NAMESPACE, namespace)
    bot = install_bot(tier.plane, namespace, tmp, read_secrets=False, flux_kustomization=engine)
    app = FluxApp(tier, repo, namespace, bot)
    provide_load_balancer(tier, namespace)
    app.wait_synced(app.head())
    return app


def provide_load_balancer(tier: Tier, namespace: str) -> None:
    """Play the cloud's part: give ``frontend-external`` (type LoadBalancer) an address,
    which Flux's health check of a LoadBalancer Service waits for."""

    def has_service() -> bool:
        out = tier.plane.kubectl(
            "get",
            "service",
            "frontend-external",
            "-n",
            namespace,
            "--ignore-not-found",
            "-o",
            "name",
        )
        return bool(out.strip())

    wait_for(has_service, "Flux to create frontend-external", SYNC_WAIT_S)
    patch = '{"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}'
    tier.plane.kubectl(
        "patch",
        "service",
        "frontend-external",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        patch,
    )
