"""The container image, built and run: tools/image/build.sh, then tools/image/run.sh.

The build needs no registry: buildah builds the repo's Dockerfile on a Debian
bookworm base that debootstrap makes from Debian's packages. Running it is what
``docker run --read-only --tmpfs /tmp -v STATE:/var/lib/gitmedic`` does: the
image's filesystem mounted read-only, the state directory and /tmp the only
writable places, the image's user and environment (see run.sh).

A cold build (debootstrap plus pip resolving [all]) takes minutes, so this runs
when the base is already cached or GITMEDIC_IMAGE_TEST=1 asks for it; it says why
when it skips.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.conftest import faulty_boutique
from tests.manifests.helpers import commit_all, init_repo
from tests.support.github_standin import free_port
from tests.support.tools import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.image]

BUILD = ROOT / "tools/image/build.sh"
RUN = ROOT / "tools/image/run.sh"
TAG = "localhost/gitmedic:dev"  # README's build names it; the default is the version
UID = 10001


def readme_commands() -> list[list[str]]:
    """The daemonless block of README's "Container image" section, which this file runs."""
    section = (ROOT / "README.md").read_text().split("\n### Container image\n", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.S)
    return [shlex.split(line) for line in blocks[1].splitlines() if line.strip()]


def test_readme_gives_the_commands_this_file_runs() -> None:
    build, mkdir, version, serve, curl = readme_commands()
    assert build == ["tools/image/build.sh", TAG]
    assert mkdir[:2] == ["mkdir", "state"] and f"{UID}:{UID}" in mkdir
    assert version == ["tools/image/run.sh", TAG, "state", "--exec", "gitmedic", "--version"]
    assert serve[:3] == ["tools/image/run.sh", TAG, "state"]
    assert curl == ["curl", f"http://127.0.0.1:{serve[serve.index('--port') + 1]}/healthz"]


def _why_not_here() -> str | None:
    missing = [tool for tool in ("buildah", "debootstrap", "unshare") if not shutil.which(tool)]
    if missing:
        return f"{', '.join(missing)} not installed"
    if os.geteuid() != 0:
        return "debootstrap and run.sh's read-only mounts need root"
    if os.environ.get("GITMEDIC_IMAGE_TEST") == "1":
        return None
    base = subprocess.run([BUILD, "--print-base"], capture_output=True, text=True, check=False)
    if base.returncode != 0:
        return (
            f"no cached base {base.stdout.strip()} (a cold build takes minutes): "
            "run tools/image/build.sh once or set GITMEDIC_IMAGE_TEST=1"
        )
    return None


@pytest.fixture(scope="module")
def image() -> str:
    reason = _why_not_here()
    if reason:
        pytest.skip(f"image not built: {reason}")
    # pytest-xdist gives each worker this fixture: one builds, the others then
    # find every layer cached (--layers) instead of racing it.
    lock = Path.home() / ".cache/gitmedic-image/build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        built = subprocess.run(
            [BUILD, TAG], capture_output=True, text=True, timeout=3600, check=False
        )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return TAG


def state_dir(path: Path) -> Path:
    path.mkdir()
    os.chown(path, UID, UID)
    return path


def run(image: str, state: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUN, image, state, *argv], capture_output=True, text=True, timeout=300, check=False
    )


def test_version(image: str, tmp_path: Path) -> None:
    version = readme_commands()[2]
    result = run(image, state_dir(tmp_path / "state"), *version[3:])
    # what the git tags give, as build.sh passes it into the build (the context has no .git)
    expected = subprocess.run(
        [BUILD, "--print-version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert (result.returncode, result.stdout) == (0, f"gitmedic {expected}\n"), result.stderr


def test_runs_as_10001_with_only_the_volume_and_tmp_writable(image: str, tmp_path: Path) -> None:
    probe = (
        "id -u; id -g; touch /var/lib/gitmedic/w /tmp/w && echo writable; "
        "for p in /opt/gitmedic/w /w /etc/w; do touch $p 2>&1 || true; done"
    )
    state = state_dir(tmp_path / "state")
    result = run(image, state, "--exec", "sh", "-c", probe)
    lines = result.stdout.splitlines() + result.stderr.splitlines()
    assert lines[:3] == [str(UID), str(UID), "writable"], lines
    refused = [line for line in lines[3:] if "Read-only file system" in line]
    assert len(refused) == 3, lines
    assert (state / "w").stat().st_uid == UID


def test_final_stage_has_no_compiler_and_no_pip(image: str, tmp_path: Path) -> None:
    probe = (
        "for t in gcc cc c++ make pip pip3; do command -v $t; done; "
        "ls /opt/gitmedic/bin | grep -i pip; "
        "/usr/bin/python3 -m pip --version 2>&1; "
        "/opt/gitmedic/bin/python -m pip --version 2>&1; true"
    )
    result = run(image, state_dir(tmp_path / "state"), "--exec", "sh", "-c", probe)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "/usr/bin/python3: No module named pip",
        "/opt/gitmedic/bin/python: No module named pip",
    ]


def test_serve_answers_healthz_on_a_read_only_root(image: str, tmp_path: Path) -> None:
    state = state_dir(tmp_path / "state")
    repo = init_repo(state / "repo")
    faulty_boutique(repo / "deploy/app.yaml")
    commit_all(repo)
    subprocess.run(["chown", "-R", f"{UID}:{UID}", repo], check=True)
    port = free_port()
    before = set(state.iterdir())
    serve = readme_commands()[3][3:]
    serve[serve.index("--port") + 1] = str(port)  # 8080 may be taken on a shared machine
    with _serving(image, state, serve, tmp_path / "serve.log") as log:
        body = _get_when_up(f"http://127.0.0.1:{port}/healthz", log)
    assert json.loads(body) == {"status": "ok"}
    assert set(state.iterdir()) - before, "serve wrote nothing to the state volume"


@contextmanager
def _serving(image: str, state: Path, argv: list[str], log: Path) -> Iterator[Path]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [RUN, image, state, *argv], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield log
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=60)


def _get_when_up(url: str, log: Path) -> str:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode())
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"serve never answered {url}: {log.read_text()[-3000:]}")
