"""Independent renders of one walk run side by side, and Go renderers run without a GC.

A walk's kustomize roots and charts do not depend on each other: each is one
``kubectl kustomize`` or ``helm template`` process that mostly waits on itself, so
they run on a small thread pool, one per core, and their results are taken in the
walk's order (whatever finished first, what the walk reports is the same). Only a
working tree is read concurrently: a git revision's tree reads through one shared
``git cat-file --batch`` process, so its renders stay one at a time.

kubectl and helm are Go programs that allocate a lot while starting (kubectl
registers every command it has) and live a fraction of a second: with Go's
collector off below a ceiling they spend about a quarter less CPU on a render;
past it the collector runs as usual. The ceiling is half the render's memory cap
(:mod:`.render_caps`), so a render that would fit under the cap with the collector
on still fits. A user's own ``GOGC`` or ``GOMEMLIMIT`` is kept.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from gitmedic.reconciler.manifests.tree import FsTree, Tree

T = TypeVar("T")

GO_MEMORY_SHARE = 2  # Go's collector starts at 1/2 of the render's memory cap


def go_env(env: Mapping[str, str], memory_mib: int) -> dict[str, str]:
    """``env`` for a short-lived Go renderer capped at ``memory_mib`` (:mod:`.render_caps`):
    its collector off until half the cap, unless the user's environment sets either."""
    own = {k: os.environ[k] for k in ("GOGC", "GOMEMLIMIT") if k in os.environ}
    limit = f"{max(memory_mib // GO_MEMORY_SHARE, 1)}MiB"
    return {**env, **(own or {"GOGC": "off", "GOMEMLIMIT": limit})}


def render_each(tree: Tree, jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job's result, in the jobs' order; side by side when ``tree`` allows it."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or not isinstance(getattr(tree, "inner", tree), FsTree):  # (substituted)
        return [job() for job in jobs]
    from concurrent.futures import ThreadPoolExecutor  # here: a single file renders nothing

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="render") as pool:
        # each job in a copy of the caller's context: its settings (context variables,
        # such as helm_render.origins_on_demand) hold in the workers as in the caller
        futures = [pool.submit(contextvars.copy_context().run, job) for job in jobs]
        return [f.result() for f in futures]
