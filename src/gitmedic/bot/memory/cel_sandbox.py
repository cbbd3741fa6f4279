"""A hard bound on every CEL evaluation that a rule cannot hide from: a child process.

The static bound (:mod:`.cel_ast`) estimates; an estimate can be wrong (a step
that copies a long list counts as one). So evaluations run in one long-lived
child (:mod:`.cel_worker`) with ``EVAL_CPU_S`` seconds of CPU time per evaluation
and ``EVAL_MEMORY_BYTES`` of address space; an evaluation over either ends the
child, the evaluation fails with a :class:`CelError` naming the bound, and the
next evaluation starts a fresh child. A wall-clock deadline of its own
(``EVAL_WALL_S``) covers a child that stops answering. The CPU bound is a cap,
never a verdict: the rule is reported failed, no finding is made or dropped.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from gitmedic.bot.memory.cel_worker import write_frame

__all__ = ["EVAL_CPU_S", "EVAL_MEMORY_BYTES", "CelSandbox", "SandboxFailure", "sandbox"]

EVAL_CPU_S = 2.0
EVAL_MEMORY_BYTES = 512 * 1024 * 1024
EVAL_WALL_S = 30.0
_HEADER = 4


class SandboxFailure(Exception):
    """The evaluation failed (its message says why) or was stopped at a bound."""


class _Silent(Exception):
    """No answer before the wall-clock deadline."""


class CelSandbox:
    """One child evaluating, one evaluation at a time (a lock: the service has threads)."""

    def __init__(
        self,
        cpu_s: float = EVAL_CPU_S,
        memory_bytes: int = EVAL_MEMORY_BYTES,
        wall_s: float = EVAL_WALL_S,
    ) -> None:
        self.cpu_s, self.memory_bytes, self.wall_s = cpu_s, memory_bytes, wall_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def evaluate(self, source: str, variables: tuple[str, ...], data: Mapping[str, Any]) -> Any:
        with self._lock:
            proc = self._child()
            assert proc.stdin is not None
            try:
                frame = pickle.dumps((source, variables, dict(data)), pickle.HIGHEST_PROTOCOL)
            except (pickle.PicklingError, TypeError) as exc:
                raise SandboxFailure(f"the input cannot be handed to CEL: {exc}") from None
            try:
                write_frame(proc.stdin, frame)
                ok, value = self._reply(proc)
            except _Silent:
                self._end(proc)
                raise SandboxFailure(
                    f"the evaluation took over {self.wall_s:g} s (wall clock) and was stopped"
                ) from None
            except (BrokenPipeError, EOFError):
                raise SandboxFailure(self._why_ended(proc)) from None
        if not ok:
            raise SandboxFailure(self._memory() if value == "memory" else value)
        return value

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._end(self._proc)

    def _child(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            code = (
                "from gitmedic.bot.memory.cel_worker import main; "
                f"main({self.cpu_s!r}, {self.memory_bytes!r})"
            )
            self._proc = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # an engine abort's message: the bound says why
                # none of this process's environment (tokens, proxies): CEL reads none
                env={"PYTHONPATH": _import_path(), "PATH": os.environ.get("PATH", "")},
            )
        return self._proc

    def _reply(self, proc: subprocess.Popen[bytes]) -> tuple[bool, Any]:
        assert proc.stdout is not None
        deadline = time.monotonic() + self.wall_s
        header = _read(proc.stdout.fileno(), _HEADER, deadline)
        body = _read(proc.stdout.fileno(), int.from_bytes(header, "little"), deadline)
        reply: tuple[bool, Any] = pickle.loads(body)
        return reply

    def _why_ended(self, proc: subprocess.Popen[bytes]) -> str:
        try:
            code = proc.wait(timeout=self.wall_s)
        except subprocess.TimeoutExpired:  # closed its output but lives on
            code = 0
        self._end(proc)
        if code == -signal.SIGPROF:
            return f"the evaluation used over {self.cpu_s:g} s of CPU time and was stopped"
        return (
            self._memory()
            if code in (-signal.SIGABRT, -signal.SIGKILL)
            else (f"the evaluation's process ended (exit {code})")
        )

    def _memory(self) -> str:
        return f"the evaluation used over {self.memory_bytes // 2**20} MiB and was stopped"

    def _end(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        if self._proc is proc:
            self._proc = None


def _read(fd: int, length: int, deadline: float) -> bytes:
    data = b""
    while len(data) < length:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise _Silent
        chunk = os.read(fd, length - len(data))
        if not chunk:
            raise EOFError("the child ended")
        data += chunk
    return data


def _import_path() -> str:
    """This process's import path, so the child imports the same gitmedic."""
    return os.pathsep.join(p for p in sys.path if p)


_shared: CelSandbox | None = None
_shared_lock = threading.Lock()


def sandbox() -> CelSandbox:
    """The process's sandbox, started at its first evaluation."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = CelSandbox()
        return _shared
