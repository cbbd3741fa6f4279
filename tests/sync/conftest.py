"""Real Application and Kustomization objects, and copies with adjusted revisions."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests.conftest import DATA

ARGO = DATA / "argocd-application"
SHA = "ea8759964626a583667a2bfd08f334ec2070040a"  # the commit diff-cache.yaml's sync applied
OTHER = "f92d9eabe6aec90f46eec5d8eb79fcdcaef6aa04"


def velero() -> dict[str, Any]:
    """diff-cache.yaml: Synced/Healthy/Succeeded; its sync.revision ("rev1") is a placeholder."""
    app: dict[str, Any] = yaml.load(
        (ARGO / "argo-cd" / "diff-cache.yaml").read_text(), Loader=yaml.CSafeLoader
    )
    return app


def deployed_velero(sha: str = SHA) -> dict[str, Any]:
    app = velero()
    app["status"]["sync"]["revision"] = sha
    app["status"]["operationState"]["syncResult"]["revision"] = sha
    return app


def example_running() -> dict[str, Any]:
    """argocd-mcp's "example": OutOfSync, Progressing, operation Running (retrying)."""
    path = ARGO / "codeready-toolchain-argocd-mcp" / "argocd-applications-example.json"
    app: dict[str, Any] = json.loads(path.read_text())["items"][0]
    return app


def mcp_list() -> list[dict[str, Any]]:
    path = ARGO / "codeready-toolchain-argocd-mcp" / "argocd-applications.json"
    items: list[dict[str, Any]] = json.loads(path.read_text())["items"]
    return items


def kustomization(name: str) -> dict[str, Any]:
    path = ARGO / "flux-kustomization" / f"{name}.yaml"
    obj: dict[str, Any] = yaml.safe_load(path.read_text())
    return obj


@pytest.fixture
def app() -> dict[str, Any]:
    return copy.deepcopy(deployed_velero())
