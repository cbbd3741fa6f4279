"""Real Flux on the control plane: its CRDs, source-controller, kustomize-controller,
and a git server (fluxcd/pkg/gittestserver) serving the manifest repositories.

The git server serves ``<folder>/git``; :meth:`Flux.serve` links a repository's
``.git`` there, so the repository the local forge merges into *is* the one Flux
fetches, as a GitHub repository is both the forge and Flux's source. The
controllers run as the admin (no impersonation), poll the source every few
seconds, and report through the real ``GitRepository`` and ``Kustomization``
status that gitmedic's Flux watcher reads.
"""

from __future__ import annotations

import functools
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.realkube.control_plane import ControlPlane
from tests.realkube.processes import Processes, StartError, free_port
from tests.realkube.tools import Tools

NAMESPACE = "flux-system"
POLL = "5s"  # how often Flux re-reads the repository and re-applies


@dataclass(frozen=True)
class Flux:
    git_url: str  # http://127.0.0.1:<port>, the git server's base URL
    docroot: Path
    plane: ControlPlane

    def serve(self, repo: Path, name: str) -> str:
        """Serve ``repo`` (a work tree) as ``<git_url>/<name>.git``; returns that URL."""
        (self.docroot / f"{name}.git").symlink_to(repo / ".git")
        return f"{self.git_url}/{name}.git"

    def deploy(self, name: str, url: str, path: str, namespace: str) -> None:
        """A GitRepository on ``main`` of ``url`` and a Kustomization applying ``path``
        into ``namespace``, both named ``name``, with health checks (``wait``)."""
        self.plane.apply(
            [
                {
                    "apiVersion": "source.toolkit.fluxcd.io/v1",
                    "kind": "GitRepository",
                    "metadata": {"name": name, "namespace": NAMESPACE},
                    "spec": {
                        "url": url,
                        "interval": POLL,
                        "ref": {"branch": "main"},
                        "timeout": "20s",
                    },
                },
                {
                    "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                    "kind": "Kustomization",
                    "metadata": {"name": name, "namespace": NAMESPACE},
                    "spec": {
                        "interval": POLL,
                        "retryInterval": POLL,
                        "path": f"./{path}",
                        "prune": True,
                        "wait": True,
                        "timeout": "60s",
                        "targetNamespace": namespace,
                        "sourceRef": {"kind": "GitRepository", "name": name},
                    },
                },
            ]
        )


def start_flux(tools: Tools, plane: ControlPlane, folder: Path, procs: Processes) -> Flux:
    docroot = folder / "git"
    docroot.mkdir(parents=True)
    git_url = _start_git_server(tools, docroot, procs)
    crds = sorted(str(p) for p in (tools.flux / "crds").glob("*.yaml"))
    plane.kubectl("apply", "--server-side", *(arg for c in crds for arg in ("-f", c)))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
    plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}])
    env = {"KUBECONFIG": str(plane.kubeconfig), "RUNTIME_NAMESPACE": NAMESPACE}
    storage = f"127.0.0.1:{free_port()}"
    (folder / "artifacts").mkdir()
    for name, extra in (
        (
            "source-controller",
            [
                f"--storage-path={folder / 'artifacts'}",
                f"--storage-addr={storage}",
                f"--storage-adv-addr={storage}",
            ],
        ),
        ("kustomize-controller", ["--no-remote-bases=true"]),
    ):
        health = free_port()
        procs.start(
            name,
            [
                tools.bin(name),
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--health-addr=127.0.0.1:{health}",
                "--watch-all-namespaces=true",
                "--log-level=info",
                *extra,
            ],
            env=env,
        )
        procs.wait_until(name, functools.partial(_healthy, health), 120.0)
    return Flux(git_url, docroot, plane)


def _start_git_server(tools: Tools, docroot: Path, procs: Processes) -> str:
    process = procs.start("gitserver", [tools.bin("gitserver"), str(docroot)])
    log = procs.log("gitserver")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if line.startswith("http://127.0.0.1:"):
                return line.strip()
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise StartError(f"gitserver printed no URL:\n{procs.tail('gitserver')}")


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def git_head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "main"], capture_output=True, text=True, check=True
    ).stdout.strip()
