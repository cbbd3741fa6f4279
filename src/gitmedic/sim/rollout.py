"""Rollout history: what the sim remembers between applies, per workload.

Each apply of a desired state compares every workload's pod template with the
last one applied; a changed template starts a new revision (a new ReplicaSet for
a Deployment), at the apply's time. A changed *fate* of the same template (a
ConfigMap it reads was deleted, an image left the catalog) restarts that
revision's pods at the apply's time: the sim behaves as if config changes
restart the pods that read them (the Reloader / checksum-annotation convention),
so a config fault shows at once rather than at the next unrelated restart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gitmedic.detectors.snapshot import Workload
from gitmedic.sim import ids
from gitmedic.sim.fate import PodFate

Key = tuple[str, str, str]  # kind, namespace, name


@dataclass(frozen=True)
class Revision:
    hash: str
    number: int
    workload: Workload
    fate: PodFate
    started: float  # when this template was first applied
    restarted: float  # when its pods were last (re)created


@dataclass(frozen=True)
class History:
    """The revisions of one workload, oldest first, and its spec generation."""

    revisions: tuple[Revision, ...]
    generation: int
    spec_digest: str

    @property
    def current(self) -> Revision:
        return self.revisions[-1]


def key_of(wl: Workload) -> Key:
    return (wl.obj.kind, wl.obj.namespace, wl.obj.name)


def advance(old: History | None, wl: Workload, fate: PodFate, now: float) -> History:
    template = wl.obj.spec.get("template") if wl.obj.kind != "Pod" else wl.obj.spec
    digest = ids.template_hash(template)
    spec_digest = ids.template_hash(wl.obj.spec)
    if old is None:
        return History((Revision(digest, 1, wl, fate, now, now),), 1, spec_digest)
    generation = old.generation + (spec_digest != old.spec_digest)
    cur = old.current
    if cur.hash == digest:
        restarted = now if fate != cur.fate else cur.restarted
        revised = replace(cur, workload=wl, fate=fate, restarted=restarted)
        return History((*old.revisions[:-1], revised), generation, spec_digest)
    kept = tuple(r for r in old.revisions if r.hash != digest)[-9:]
    new = Revision(digest, cur.number + 1, wl, fate, now, now)
    return History((*kept, new), generation, spec_digest)


def ready_in(histories: Iterable[History], now: float) -> float:
    """Seconds until every pod that will become Ready is (0 when all are): how long a
    cluster that has just applied a revision takes to settle."""
    waits = [
        h.current.restarted + c.ready_delay_s - now
        for h in histories
        for c in h.current.fate.containers
        if c.ready_delay_s is not None
    ]
    return max([0.0, *waits])
