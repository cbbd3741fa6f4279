"""Caps on what one render may cost: objects, bytes, seconds and memory.

A chart's template or a kustomization is the repository writer's program: a
nine-line template looping 100,000 times rendered for minutes into hundreds of
megabytes. So each renderer process runs under caps (``manifests`` in the work
tree's ``.gitmedic/config.yaml``, never the revision being rendered):

- ``max_rendered_bytes``: its output is read as it streams and the process is
  killed as soon as it passes the cap;
- ``render_timeout_s``: a deadline shared by every process of one render (helm
  runs twice, once to trace values): a cap, never a verdict; the render is an
  error naming the chart or kustomization, and nothing is concluded from it;
- ``render_memory_mib``: the process's data segment (``RLIMIT_DATA``);
- ``max_rendered_objects``: counted on the stream's documents before any is parsed.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RenderCapError", "RenderCaps", "count_documents", "render_caps", "run_capped"]

_DOCUMENT = re.compile(r"^---", re.MULTILINE)
_CHUNK = 1 << 16


class RenderCapError(Exception):
    """A render went over a cap; the message names the cap and its config key."""


@dataclass(frozen=True)
class RenderCaps:
    objects: int = 20_000
    bytes: int = 64 * 2**20
    seconds: float = 60.0
    memory_mib: int = 1024

    def deadline(self, now: float) -> float:
        return now + self.seconds


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_capped(
    argv: list[str], *, env: dict[str, str], cwd: str, caps: RenderCaps, deadline: float
) -> Finished:
    """``argv`` run to its end under ``caps`` (RenderCapError past one, the process killed)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    try:
        limit = caps.memory_mib * 2**20
        # set from outside, at once (a preexec_fn is unsafe in a process with threads);
        # a process that has already ended needs no limit
        with contextlib.suppress(ProcessLookupError):
            resource.prlimit(proc.pid, resource.RLIMIT_DATA, (limit, limit))
        out, err = _drain(proc, caps, deadline)
        return Finished(proc.wait(), out.decode(errors="replace"), err.decode(errors="replace"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _drain(proc: subprocess.Popen[bytes], caps: RenderCaps, deadline: float) -> tuple[bytes, bytes]:
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    sizes = dict.fromkeys(chunks, 0)
    open_fds = list(chunks)
    while open_fds:
        left = deadline - time.monotonic()
        ready = select.select(open_fds, [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            raise RenderCapError(
                f"did not finish within {caps.seconds:g} s (manifests.render_timeout_s) "
                "and was stopped"
            )
        for fd in ready:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                open_fds.remove(fd)
                continue
            chunks[fd].append(chunk)
            sizes[fd] += len(chunk)
            if sizes[fd] > caps.bytes:
                raise RenderCapError(
                    f"rendered more than {caps.bytes:,} bytes (manifests.max_rendered_bytes) "
                    "and was stopped"
                )
    return b"".join(chunks[proc.stdout.fileno()]), b"".join(chunks[proc.stderr.fileno()])


def count_documents(stream: str, caps: RenderCaps) -> None:
    """RenderCapError when ``stream`` holds more documents than ``caps`` allow objects."""
    count = len(_DOCUMENT.findall(stream)) + (0 if stream.lstrip().startswith("---") else 1)
    if count > caps.objects:
        raise RenderCapError(
            f"rendered {count:,} documents, more than {caps.objects:,} objects "
            "(manifests.max_rendered_objects)"
        )


_cached: dict[Path, tuple[tuple[int, int], RenderCaps]] = {}


def render_caps(root: Path) -> RenderCaps:
    """The caps of the work tree's config (the defaults without one, or with an invalid one:
    ``gitmedic memory check`` says what is wrong with it)."""
    from gitmedic.reconciler.config import CONFIG_PATH, ConfigError
    from gitmedic.reconciler.manifests.config_file import load_config

    path = root / CONFIG_PATH
    try:
        st = path.lstat()
    except OSError:
        return RenderCaps()
    key = (st.st_mtime_ns, st.st_size)
    cached = _cached.get(path)
    if cached is None or cached[0] != key:
        try:
            m = load_config(path).manifests
            caps = RenderCaps(
                m.max_rendered_objects,
                m.max_rendered_bytes,
                m.render_timeout_s,
                m.render_memory_mib,
            )
        except ConfigError:
            caps = RenderCaps()
        cached = _cached[path] = (key, caps)
    return cached[1]
