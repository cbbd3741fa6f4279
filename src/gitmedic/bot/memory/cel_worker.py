"""The child process that evaluates learned rules' CEL, under hard limits.

Started by :mod:`.cel_sandbox` as ``python -c`` (a worker, not the CLI). It caps
its own address space (``RLIMIT_AS``) once at start, then reads requests from
stdin and answers on stdout, one pickled frame each way. Each evaluation runs
under a CPU-time timer (``ITIMER_PROF``) whose signal, ``SIGPROF``, keeps its
default action: it ends the process, inside the engine's C++ loop too, where no
Python handler would run. The parent sees the signal and names the bound.
"""

from __future__ import annotations

import pickle
import resource
import signal
import struct
import sys
from functools import lru_cache
from typing import IO, Any

_HEADER = struct.Struct("<I")


def main(cpu_s: float, memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    while True:
        request = read_frame(reader)
        if request is None:
            return
        source, variables, data = request
        signal.setitimer(signal.ITIMER_PROF, cpu_s)
        try:
            reply: tuple[bool, Any] = (True, _evaluate(source, variables, data))
        except MemoryError:
            reply = (False, "memory")
        except Exception as exc:  # the binding raises plain RuntimeError/ValueError
            reply = (False, str(exc).strip() or type(exc).__name__)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        write_frame(writer, pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))


def _evaluate(source: str, variables: tuple[str, ...], data: dict[str, Any]) -> Any:
    from cel_expr_python import cel

    value = _compiled(source, variables).eval(data=data)
    if value.type() == cel.Type.ERROR:
        raise ValueError(str(value.value()))
    return value.plain_value()


@lru_cache(maxsize=256)
def _compiled(source: str, variables: tuple[str, ...]) -> Any:
    from cel_expr_python import cel

    env = cel.NewEnv(variables={name: cel.Type.DYN for name in variables})
    return env.compile(source)


def read_frame(stream: IO[bytes]) -> Any:
    """The next pickled frame, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (length,) = _HEADER.unpack(header)
    body = stream.read(length)
    return pickle.loads(body) if len(body) == length else None


def write_frame(stream: IO[bytes], body: bytes) -> None:
    """One frame: ``body`` (a pickle) after its length."""
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()
