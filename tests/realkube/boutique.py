"""online-boutique (tests/fixtures/data/apps) on the real control plane."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import APPS
from tests.realkube.control_plane import ControlPlane
from tests.transaction.e2e_world import ENV

MANIFEST = APPS / "online-boutique" / "release" / "kubernetes-manifests.yaml"
WAIT_S = 120.0


def boutique_objects() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]


def deploy(plane: ControlPlane, namespace: str, objects: list[dict[str, Any]]) -> None:
    """Apply ``objects`` into ``namespace`` and wait until every Deployment is available."""
    plane.kubectl(
        "apply", "-n", namespace, "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects)
    )
    wanted = {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"}
    wait_for(lambda: wanted <= available(plane, namespace), f"{namespace}: deployments available")


def available(plane: ControlPlane, namespace: str) -> set[str]:
    items = plane.get_json("deployments", "-n", namespace)["items"]
    assert isinstance(items, list)
    return {
        d["metadata"]["name"]
        for d in items
        if d.get("status", {}).get("availableReplicas", 0) >= d["spec"]["replicas"] > 0
    }


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(1.0)


def gitmedic(
    *args: str, kubeconfig: Path, timeout_s: float = 120.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``gitmedic`` command in a subprocess, reading the cluster as ``kubeconfig``
    (``env``: more of its environment, such as the Argo CD token)."""
    env = {**ENV, **(env or {}), "KUBECONFIG": str(kubeconfig)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
    )
