"""Which program builds a kustomization: the [kustomize] extra's kubectl beside Python,
else a standalone kustomize on PATH (the container image's), else a kubectl on PATH.

The standalone binary rendering a real kustomization through the CLI is
tests/packaging/test_packaged_cli.py's (a core install with only git and kustomize on
PATH) and tests/packaging/test_image.py's (the image has no kubectl).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.kustomize import kustomize_command


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def python_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python whose folder holds only itself, and an empty PATH."""
    venv_bin = tmp_path / "venv/bin"
    monkeypatch.setattr(sys, "executable", str(_program(venv_bin, "python")))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return venv_bin


def test_the_extras_kubectl_beside_python_comes_first(
    python_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubectl = _program(python_in, "kubectl")
    monkeypatch.setenv("PATH", str(_program(tmp_path / "path", "kustomize").parent))
    assert kustomize_command() == [str(kubectl), "kustomize"]


def test_a_standalone_kustomize_on_path_before_a_kubectl_there(
    python_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubectl = _program(tmp_path / "first", "kubectl")
    kustomize = _program(tmp_path / "second", "kustomize")
    monkeypatch.setenv("PATH", f"{kubectl.parent}:{kustomize.parent}")
    assert kustomize_command() == [str(kustomize), "build"]


def test_a_kubectl_on_path_when_nothing_else_is_there(
    python_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubectl = _program(tmp_path / "path", "kubectl")
    monkeypatch.setenv("PATH", str(kubectl.parent))
    assert kustomize_command() == [str(kubectl), "kustomize"]


def test_neither_names_both_ways_to_get_one(python_in: Path) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        kustomize_command()
    message = str(raised.value)
    assert "pip install 'gitmedic[kustomize]'" in message
    assert "a kustomize or a kubectl on PATH" in message
