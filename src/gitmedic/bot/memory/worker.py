"""A persistent sandboxed interpreter for a repo's learned detectors: one start, many runs.

:func:`.sandbox.run_sandboxed` starts a fresh interpreter per run (~170 ms, most of
it interpreter and SDK start-up); the monitor runs learned detectors on most ticks,
so it uses a :class:`SandboxWorker` instead. The worker is the same sandbox (``-I``,
the same address-space and file-size rlimits, the same audit hook, ``unshare
--net`` where possible), started once: it compiles the modules it was given
before the hook goes in, then answers one JSON request per line on stdin with
one JSON reply per line on stdout. Each run executes the module's code into a
fresh module object, so module globals do not carry over between runs.

Limits, enforced by the parent:

- wall clock: each run has ``time_limit_s``; on overrun, a crash, or a reply that
  is not ours (garbage, wrong sequence number, oversized), the process is
  killed and the run raises :class:`SandboxError`, the runner's isolation turns
  that into an error entry, and the next run starts a fresh worker;
- CPU: ``RLIMIT_CPU`` counts a process's whole life, so the worker's hard limit
  is ``cpu_budget_s``; every reply carries the CPU used so far and the parent
  retires the worker before a run could start with less than ``time_limit_s``
  left (and after ``max_runs``), so the rlimit stops only a run that spreads
  over threads, never an honest one;
- memory: a ``MemoryError`` is reported and the worker retired (its heap may
  be fragmented by the hoard); a kill by the kernel is a crash as above.

The snapshot is sent once per snapshot object: the monitor hands the same one
to every detector of an evaluation, so further runs on it send only the module
path. The learned detectors of one repo share the worker: they come from the
same repo (one trust domain, like the built-ins share the bot's process); the
sandbox is the wall between them and the bot, and one failing stops only its
own run. :meth:`SandboxWorker.close` (or ``with``, or garbage collection, or
interpreter exit) kills the process.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from gitmedic.bot.memory.sandbox import (
    MEMORY_LIMIT_BYTES,
    RESULT,
    TIME_LIMIT_S,
    SandboxError,
    SandboxRun,
    audit_hook,
    last_error,
    package_root,
    run_from_json,
    sandbox_command,
    snapshot_payload,
)
from gitmedic.detectors.snapshot import Snapshot

MAX_REPLY_BYTES = 32 * 1024 * 1024

_WORKER = r"""
import io, json, resource, sys, time, types
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
sys.path.insert(0, {pkg_root!r})
import gitmedic.detectors as sdk
import gitmedic.detectors.builtin  # loaded before the hook: learned detectors may refine them
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.registry import from_module
codes = {{}}
for path in {paths!r}:
    try:
        codes[path] = compile(open(path).read(), path, "exec")
    except (OSError, SyntaxError, ValueError) as exc:
        codes[path] = f"{{type(exc).__name__}}: {{exc}}"
requests, replies = sys.stdin, sys.stdout
{hook}{result}
def run(path, snapshot):
    code = codes[path]
    if isinstance(code, str):
        raise ImportError(code)
    module = types.ModuleType("learned_detector")
    module.__file__, module.__builtins__ = path, SAFE_BUILTINS
    exec(code, module.__dict__)
    det = from_module(module)
    return result(det, list(det.detect(snapshot)))
def answer(request, snapshot):
    try:
        return {{"ok": run(request["path"], snapshot)}}
    except MemoryError:
        return {{"error": "exceeded its memory limit", "retire": True}}
    except BaseException as exc:  # the detector's failure is its run's answer
        return {{"error": f"{{type(exc).__name__}}: {{exc}}"}}
sys.addaudithook(hook)
snapshot = None
for line in requests:
    request = json.loads(line)
    if "objects" in request:
        snapshot = Snapshot([Obj(Resource(o["kind"], o["namespace"], o["name"], o["apiVersion"]),
                                 o["body"]) for o in request["objects"]],
                            mode=Mode(request["mode"]))
    sys.stdout = sys.stderr = io.StringIO()  # a detector's prints never reach the protocol
    reply = answer(request, snapshot)
    reply["seq"], reply["cpu"] = request["seq"], time.process_time()
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
"""


@dataclass(frozen=True)
class WorkerLimits:
    time_limit_s: float = TIME_LIMIT_S  # wall clock, per run
    cpu_budget_s: float = 120.0  # the worker's RLIMIT_CPU, over its whole life
    max_runs: int = 2000  # retire the worker after this many runs

    def __post_init__(self) -> None:
        if self.time_limit_s <= 0 or self.max_runs < 1:
            raise ValueError("a worker needs a positive time limit and at least one run")
        if self.cpu_budget_s < 2 * self.time_limit_s:
            raise ValueError("a worker's CPU budget must cover at least two runs' time limit")


class _Broken(Exception):
    """The worker process is unusable (overran, died, or answered garbage)."""


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    selector: selectors.BaseSelector
    buffer: bytes = b""
    runs: int = 0
    cpu_s: float = 0.0
    sent: Snapshot | None = None  # the snapshot this process holds


class SandboxWorker:
    """One persistent sandboxed interpreter running the detector modules at ``paths``."""

    def __init__(self, paths: Iterable[Path], limits: WorkerLimits = WorkerLimits()) -> None:
        self.paths = tuple(str(p.resolve()) for p in paths)
        self.limits = limits
        self.starts = 0  # processes started so far (restarts show here)
        self._process: _Process | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._seq = 0
        self._lock = threading.Lock()

    def run(self, path: Path, snapshot: Snapshot) -> SandboxRun:
        """The module at ``path`` (one of ``paths``) on ``snapshot``, within the limits."""
        key = str(path.resolve())
        if key not in self.paths:
            raise ValueError(f"{path} is not one of this worker's modules")
        with self._lock:
            reply = self._ask(key, path.name, snapshot)
        if "error" in reply:
            raise SandboxError(f"{path.name}: {reply['error']}")
        try:
            return run_from_json(reply["ok"])
        except (KeyError, TypeError, ValueError) as exc:
            self.close()
            raise SandboxError(f"{path.name}: answered garbage ({exc})") from None

    @property
    def pid(self) -> int | None:
        return self._process.popen.pid if self._process else None

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._process = self._finalizer = None

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- one request ----------------------------------------------------------------

    def _ask(self, key: str, name: str, snapshot: Snapshot) -> dict[str, Any]:
        process = self._process or self._start()
        self._seq += 1
        request: dict[str, Any] = {"seq": self._seq, "path": key}
        if process.sent is not snapshot:
            request |= snapshot_payload(snapshot)
        deadline = time.monotonic() + self.limits.time_limit_s
        try:
            _send(process, (json.dumps(request) + "\n").encode(), deadline)
            reply = _receive(process, deadline)
            if not isinstance(reply, dict) or reply.get("seq") != self._seq:
                raise _Broken("answered out of turn")
            process.sent, process.runs = snapshot, process.runs + 1
            process.cpu_s = float(reply["cpu"])
        except TimeoutError:
            self.close()
            limit = self.limits.time_limit_s
            raise SandboxError(f"{name}: ran past its time limit of {limit:g}s") from None
        except (_Broken, KeyError, TypeError, ValueError) as exc:
            message = self._crash_message(process, exc)
            self.close()
            raise SandboxError(f"{name}: {message}") from None
        if reply.get("retire") or self._spent(process):
            self.close()
        return reply

    def _spent(self, process: _Process) -> bool:
        left = self.limits.cpu_budget_s - process.cpu_s
        return left < self.limits.time_limit_s or process.runs >= self.limits.max_runs

    def _crash_message(self, process: _Process, exc: Exception) -> str:
        popen = process.popen
        try:
            code = popen.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return f"answered garbage ({exc})"
        assert popen.stderr is not None
        return last_error(popen.stderr.read(64 * 1024).decode(errors="replace"), code)

    def _start(self) -> _Process:
        script = _WORKER.format(
            mem=MEMORY_LIMIT_BYTES,
            cpu=math.ceil(self.limits.cpu_budget_s),
            pkg_root=package_root(),
            paths=list(self.paths),
            hook=audit_hook(),
            result=RESULT,
        )
        popen = subprocess.Popen(
            sandbox_command(script),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": os.defpath},
        )
        assert popen.stdin is not None and popen.stdout is not None
        os.set_blocking(popen.stdin.fileno(), False)
        selector = selectors.DefaultSelector()
        self._finalizer = weakref.finalize(self, _terminate, popen, selector)
        self._process = _Process(popen, selector)
        self.starts += 1
        return self._process


def _send(process: _Process, data: bytes, deadline: float) -> None:
    stdin = process.popen.stdin
    assert stdin is not None
    view = memoryview(data)
    while view:
        _wait(process.selector, stdin, selectors.EVENT_WRITE, deadline)
        try:
            view = view[os.write(stdin.fileno(), view) :]
        except BrokenPipeError:
            raise _Broken("died") from None


def _receive(process: _Process, deadline: float) -> Any:
    stdout = process.popen.stdout
    assert stdout is not None
    while b"\n" not in process.buffer:
        if len(process.buffer) > MAX_REPLY_BYTES:
            raise _Broken(f"a reply over {MAX_REPLY_BYTES} bytes")
        _wait(process.selector, stdout, selectors.EVENT_READ, deadline)
        chunk = os.read(stdout.fileno(), 1 << 16)
        if not chunk:
            raise _Broken("died")
        process.buffer += chunk
    line, _, process.buffer = process.buffer.partition(b"\n")
    return json.loads(line)


def _wait(selector: selectors.BaseSelector, stream: Any, event: int, deadline: float) -> None:
    selector.register(stream, event)
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise TimeoutError
    finally:
        selector.unregister(stream)


def _terminate(popen: subprocess.Popen[bytes], selector: selectors.BaseSelector) -> None:
    """Kill and reap the process and close its pipes (no ResourceWarning, no zombie)."""
    if popen.poll() is None:
        popen.kill()
    popen.wait()
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        if stream is not None:
            stream.close()
    selector.close()
