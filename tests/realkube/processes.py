"""Start the tier's servers as child processes and stop exactly those, by pid.

Each process gets its own session (so a signal to the test runner's group does
not reach it first), its output in ``<folder>/<name>.log``, and is recorded in
``<folder>/pids`` as it starts, so even a runner that died can be cleaned up by
:func:`stop_recorded`. Waits are real (this is the integration tier) and end
with an error that quotes the end of the server's log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

STOP_GRACE_S = 10.0
# The servers outlive the Processes that started them (one tier serves every test,
# and other pytest processes attach to it): their Popen objects are kept here so
# that Python neither warns that they still run nor loses the means to reap them.
_STARTED: list[subprocess.Popen[bytes]] = []


class StartError(RuntimeError):
    """A server did not come up; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Processes:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.started: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(
        self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        with self.log(name).open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        self.started.append((name, process))
        _STARTED.append(process)
        with (self.folder / "pids").open("a") as pids:
            pids.write(f"{process.pid} {argv[0]}\n")
        return process

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def wait_until(self, name: str, ready: Callable[[], bool], timeout_s: float) -> None:
        """Poll ``ready`` until it holds; fail early if ``name`` exited."""
        deadline = time.monotonic() + timeout_s
        process = dict(self.started)[name]
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise StartError(f"{name} exited ({process.returncode}):\n{self.tail(name)}")
            if ready():
                return
            time.sleep(0.25)
        raise StartError(f"{name} not ready after {timeout_s:.0f} s:\n{self.tail(name)}")

    def tail(self, name: str, lines: int = 25) -> str:
        text = self.log(name).read_text(errors="replace") if self.log(name).exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def stop_recorded(folder: Path, grace_s: float = STOP_GRACE_S) -> None:
    """Stop what a harness in ``folder`` started (this process or an earlier one):
    SIGTERM, then SIGKILL after ``grace_s``. Only a pid whose command line still
    starts with the recorded program is signalled (pids are reused)."""
    pids = folder / "pids"
    if not pids.exists():
        return
    alive = [pid for pid, program in _recorded(pids) if _runs(pid, program)]
    signalled = set(alive)
    for pid in alive:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _running(pid)]
    for pid in alive:
        _signal(pid, signal.SIGKILL)
    pids.unlink()
    _reap(signalled)


def _reap(signalled: set[int]) -> None:
    """Collect the exit status of those of this process's children that were stopped."""
    for process in [p for p in _STARTED if p.pid in signalled]:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_GRACE_S)
    _STARTED[:] = [p for p in _STARTED if p.returncode is None]


def _recorded(pids: Path) -> list[tuple[int, str]]:
    return [
        (int(pid), program)
        for pid, program in (line.split(" ", 1) for line in pids.read_text().splitlines() if line)
    ]


def _runs(pid: int, program: str) -> bool:
    """Is ``pid`` still ``program``? A program may rewrite its title over its arguments
    (redis-server shows ``/usr/bin/redis-server 127.0.0.1:PORT`` as one argument), so
    the program is the title's first word too: each Argo CD run left a redis behind."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return False
    return program in (argv0, argv0.split(" ", 1)[0]) and _running(pid)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a child of a runner that has not reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
