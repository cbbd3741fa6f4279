"""The forge token reaches git in its environment, never its argv.

``/proc/<pid>/cmdline`` of every process is readable by every user of the
machine, so a token on git's command line leaks. gitmedic's own clone
(:class:`gitmedic.bot.forges.github_env.Clone`, what ``serve`` and ``run --forge
github`` fetch before each use) is cloned and fetched from a real HTTP git
server on 127.0.0.1 (git's "dumb" protocol, static files) through a ``git`` shim
on PATH that records each call's argv and environment names. The server sees
the token (so authentication really happened); no argv holds it.
"""

from __future__ import annotations

import base64
import http.server
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.bot.forges.github_env import Clone
from tests.security.local_http import serving

TOKEN = "ghs_argv_must_never_hold_this_0123456789"


class _Recorder(http.server.SimpleHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization", ""))
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def served_repo(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "app.yaml").write_text("kind: ConfigMap\n")
    ident = ["-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(work), *ident, "commit", "-qm", "one"], check=True)
    bare = tmp_path / "srv" / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "update-server-info"], check=True)
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    with serving(lambda *a: handler(*a, directory=str(tmp_path / "srv"))) as url:
        yield f"{url}/repo.git", seen


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that logs argv and environment names, then runs git."""
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git-calls.log"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        f'{{ echo "ARGV $*"; env | cut -d= -f1 | sed "s/^/ENV /"; }} >> {log}\n'
        f'exec {real} "$@"\n'
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    return log


@pytest.mark.integration
def test_clone_and_fetch_authenticate_without_the_token_in_argv(
    tmp_path: Path, served_repo: tuple[str, list[str]], git_calls: Path
) -> None:
    url, seen = served_repo
    clone = Clone(tmp_path / "state" / "clone", url, lambda: TOKEN)

    clone.sync()  # clone, then fetch
    clone.sync()  # fetch again into the existing clone

    assert (tmp_path / "state" / "clone" / "app.yaml").read_text() == "kind: ConfigMap\n"
    expected = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert seen and set(seen) == {expected}, "every request carried the token"
    calls = git_calls.read_text()
    argv = [line for line in calls.splitlines() if line.startswith("ARGV ")]
    assert any(" clone " in a for a in argv) and sum(" fetch " in a for a in argv) == 2
    assert TOKEN not in calls and expected.split()[1] not in calls
    assert "ENV GIT_CONFIG_KEY_0" in calls.splitlines()
    on_disk = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert TOKEN.encode() not in on_disk and expected.split()[1].encode() not in on_disk
