"""The built distribution, installed as a user would: from the wheel, in a fresh venv.

``make test`` builds ``dist/`` with ``python -m build`` (the wheel from the sdist)
and points ``GITMEDIC_DIST`` at it; a targeted run without it builds its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.tools import ROOT


@dataclass(frozen=True)
class Dist:
    folder: Path

    @property
    def wheel(self) -> Path:
        (wheel,) = self.folder.glob("gitmedic-*.whl")
        return wheel

    @property
    def sdist(self) -> Path:
        (sdist,) = self.folder.glob("gitmedic-*.tar.gz")
        return sdist

    @property
    def build_log(self) -> str:
        return (self.folder / "build.log").read_text()


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run(
        self, *argv: str | Path, cwd: Path | None = None, path: str = "/usr/bin:/bin"
    ) -> subprocess.CompletedProcess[str]:
        # The venv before the system's tools: no tool of the dev venv leaks in.
        env = {"PATH": f"{self.bin}:{path}", "HOME": str(Path.home()), "LC_ALL": "C.UTF-8"}
        return subprocess.run(
            [str(a) for a in argv], capture_output=True, text=True, timeout=600, env=env, cwd=cwd
        )

    def site_packages(self) -> Path:
        (found,) = self.root.glob("lib/python3*/site-packages")
        return found


def build(folder: Path) -> None:
    log = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(folder), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    (folder / "build.log").write_text(log.stdout + log.stderr)
    assert log.returncode == 0, log.stdout + log.stderr


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    given = os.environ.get("GITMEDIC_DIST")
    if given:
        return Dist(Path(given).resolve())
    folder = tmp_path_factory.mktemp("dist")
    build(folder)
    return Dist(folder)


def make_venv(root: Path, *requirements: str | Path) -> Venv:
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    venv = Venv(root)
    install = venv.run(
        venv.bin / "pip", "install", "--quiet", "--disable-pip-version-check", *requirements
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return venv


@pytest.fixture(scope="session")
def core_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """``pip install gitmedic``: the core, from the built wheel."""
    return make_venv(tmp_path_factory.mktemp("core") / "venv", dist.wheel)


@pytest.fixture(scope="session")
def rules_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """``pip install 'gitmedic[rules]'``: the core and the CEL engine of the bot's memory."""
    return make_venv(tmp_path_factory.mktemp("rules") / "venv", f"{dist.wheel}[rules]")
