"""The helm executable and the environment it runs in, for rendering and for pulling.

Below both :mod:`.helm` (``helm template``) and :mod:`.chart_pull` (``helm pull``):
each runs the same binary with homes of its own and raises the same error.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gitmedic.reconciler.manifests.render_sandbox import sandbox_env

INSTALL_HINT = (
    "helm not found: install helm v3 (go install helm.sh/helm/v3/cmd/helm@v3.22.0, "
    "or https://helm.sh/docs/intro/install/) or set GITMEDIC_HELM to its path"
)


class HelmError(Exception):
    """The chart cannot be rendered; the message says why."""


def helm_path() -> str:
    given = os.environ.get("GITMEDIC_HELM")
    if given:
        if not os.access(given, os.X_OK):
            raise HelmError(f"GITMEDIC_HELM={given} is not an executable; {INSTALL_HINT}")
        return given
    found = shutil.which("helm")
    if not found:
        raise HelmError(INSTALL_HINT)
    return found


def helm_env(home: Path, *, network: bool = False) -> dict[str, str]:
    """Only what helm needs (:mod:`.render_sandbox`): no user config, no plugins, no
    cluster; the machine's proxies only for a pull (``network``), as the user's own helm
    would use them."""
    dirs = {
        "HELM_CACHE_HOME": home / "cache",
        "HELM_CONFIG_HOME": home / "config",
        "HELM_DATA_HOME": home / "data",
        "HELM_PLUGINS": home / "plugins",
        "HELM_REGISTRY_CONFIG": home / "registry.json",
        "HELM_REPOSITORY_CONFIG": home / "repositories.yaml",
        "HELM_REPOSITORY_CACHE": home / "repository",
    }
    return {**sandbox_env(home, network=network), **{k: str(v) for k, v in dirs.items()}}
