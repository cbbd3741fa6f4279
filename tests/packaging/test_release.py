"""Release by tag: a tagged clone's dry run builds every artefact at the tag's version.

The clone gets a tag nobody would push (v9.8.7), so the test proves the version
comes from the tag, not from a file: the wheel and sdist are 9.8.7, the installed
CLI says so, the chart package is 9.8.7 with appVersion 9.8.7, and SHA256SUMS
matches every file. The release workflow runs the same script, and actionlint
holds it (tests/packaging/test_action.py lints every workflow). The image archives
are left out here (GITMEDIC_RELEASE_IMAGE=0): tests/packaging/test_image.py runs the
dry run with them where buildah is.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.packaging.conftest import make_venv
from tests.support.tools import ROOT, tool_path

pytestmark = pytest.mark.integration


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_tagged_dry_run_builds_every_artefact_at_the_tags_version(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "v9.8.7", "-m", "9.8.7")
    out = tmp_path / "release"
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "GITMEDIC_RELEASE_IMAGE": "0",
        "PATH": f"{Path(tool_path('helm')).parent}:{os.environ['PATH']}",
    }
    env.pop("SETUPTOOLS_SCM_PRETEND_VERSION", None)
    done = subprocess.run(
        [str(clone / "tools/release/dry-run.sh"), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    names = sorted(p.name for p in out.iterdir())
    assert {
        "gitmedic-9.8.7-py3-none-any.whl",
        "gitmedic-9.8.7.tar.gz",
        "gitmedic-9.8.7.tgz",
        "SHA256SUMS",
    } <= set(names), names
    sums = dict(
        reversed(line.split("  ", 1)) for line in (out / "SHA256SUMS").read_text().splitlines()
    )
    assert set(sums) == set(names) - {"SHA256SUMS"}
    for name, digest in sums.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name

    with tarfile.open(out / "gitmedic-9.8.7.tgz") as chart:
        meta = yaml.safe_load(chart.extractfile("gitmedic/Chart.yaml").read())  # type: ignore[union-attr]
    assert (meta["version"], meta["appVersion"]) == ("9.8.7", "9.8.7")

    venv = make_venv(tmp_path / "venv", out / "gitmedic-9.8.7-py3-none-any.whl")
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's own
    version = subprocess.run(
        [str(venv.bin / "gitmedic"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean,
    )
    assert version.stdout == "gitmedic 9.8.7\n", version.stderr
