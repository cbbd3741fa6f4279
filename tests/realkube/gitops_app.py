"""online-boutique as a manifest repository that a real GitOps engine deploys, and
the loop run on it: what the Flux and the Argo CD loop tests share.

The repository the local forge merges into is the one the git server serves; the
engine applies ``apps/online-boutique`` from its ``main`` into the test's namespace.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import inject
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.realkube.boutique import MANIFEST, gitmedic, wait_for
from tests.realkube.kubelet import entrypoint_missing, fake_kubelet, image_missing
from tests.realkube.tier import Tier
from tests.transaction.e2e_world import git

APP = "apps/online-boutique"
FILE = f"{APP}/{MANIFEST.name}"
SYNC_WAIT_S = 240.0


def manifest_repo(tmp: Path, config: str) -> Path:
    """A git repository with online-boutique at ``APP`` and ``config`` as its
    ``.gitmedic/config.yaml``, committed on ``main``."""
    repo = tmp / "repo"
    (repo / APP).mkdir(parents=True)
    shutil.copy(MANIFEST, repo / APP / MANIFEST.name)
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(config)
    init_repo(repo)
    return repo


def run_loop(
    repo: Path, bot: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``gitmedic run REPO --cluster kube --forge local --once --json``, as the bot."""
    return gitmedic(
        "run",
        str(repo),
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
        kubeconfig=bot,
        timeout_s=900,
        env=env,
    )


def loop_report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The run's JSON report; a failed run fails the test with the end of its log."""
    assert done.returncode == 0, (
        f"exit {done.returncode}\n{done.stderr[-4000:]}\nreport: {done.stdout[-6000:]}"
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def reverted_then_committed(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The run ended healthy with one incident whose first attempt was reverted and whose
    retry committed; (the reverted attempt, the retry) as the report tells them."""
    assert report["healthy"] is True
    (incident,) = report["incidents"]
    statuses = [t["status"] for t in incident["transactions"]]
    assert statuses == ["reverted", "committed"], statuses
    first, retry = incident["transactions"]
    return first, retry


def assert_release_undone(repo: Path, release: Release) -> None:
    """main deploys the catalog's old image with its old entrypoint again."""
    fixed = git(repo, "show", f"main:{FILE}")
    assert release.old_image in fixed and release.never not in fixed
    assert release.command[0] not in fixed


def commit_fault(repo: Path, namespace: str, fault: str, **params: object) -> tuple[str, str]:
    """Commit ``fault`` to main; (the commit, what it changed)."""
    snapshot = load_desired(repo / APP, namespace=namespace).snapshot
    injection = inject(fault, repo, snapshot, **params)
    return commit_all(repo, f"{fault}: a bad change"), injection.detail


@dataclass(frozen=True)
class Release:
    sha: str  # main after the release
    old_image: str  # the catalog's image before it
    never: str  # the tag it moved to, never pushed
    command: list[str]  # the entrypoint it moved to, which only the new image has


def push_release(repo: Path, namespace: str, target: str) -> Release:
    """A release of ``target`` as two commits reaching main at once (a push, so the
    engine never deploys the first alone): a new entrypoint, then a tag never pushed.
    Restoring the image alone crash-loops (the old image lacks the entrypoint)."""
    manifest = repo / FILE
    old_image = next(
        line.split("image: ", 1)[1]
        for line in manifest.read_text().splitlines()
        if f"{target}:" in line and "image: " in line
    )
    command = ["/catalog-v2"]
    never = f"{old_image.rsplit(':', 1)[0]}:v9.9.9-never"
    git(repo, "checkout", "-q", "-b", "release")
    commit_fault(repo, namespace, "wrong-command", target=target, command=command[0])
    manifest.write_text(manifest.read_text().replace(old_image, never, 1))
    sha = commit_all(repo, f"{target}: release v9.9.9")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "release")
    git(repo, "branch", "-q", "-D", "release")
    return Release(sha, old_image, never, command)


class DeployedApp(Protocol):
    """What the Flux and the Argo CD app of a test have in common."""

    @property
    def tier(self) -> Tier: ...

    @property
    def repo(self) -> Path: ...

    @property
    def namespace(self) -> str: ...

    def wait_applied(self, sha: str) -> None: ...

    def run_once(self) -> subprocess.CompletedProcess[str]: ...


def run_on_release(app: DeployedApp, release: Release) -> dict[str, Any]:
    """Once the engine applied ``release``, with a fake kubelet failing the pods as a real
    one would (the tag never pushed cannot be pulled, the old image lacks the new
    entrypoint), the loop's report of ``gitmedic run --once``."""
    verdicts = [
        image_missing({release.never}),
        entrypoint_missing(release.old_image, release.command),
    ]
    with fake_kubelet(app.tier.plane, app.namespace, verdicts) as kubelet:
        app.wait_applied(release.sha)
        wait_for(lambda: bool(kubelet.reported), "the fake kubelet to report ImagePullBackOff")
        return loop_report(app.run_once())


def provide_load_balancer(tier: Tier, namespace: str) -> None:
    """Play the cloud's part: give ``frontend-external`` (type LoadBalancer) an address,
    which the engines' health checks of a LoadBalancer Service wait for."""

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

    wait_for(has_service, "the engine to create frontend-external", SYNC_WAIT_S)
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
