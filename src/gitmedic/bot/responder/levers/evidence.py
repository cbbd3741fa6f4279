"""What a lever reads (the finding, live and desired state, history) and how it edits.

:class:`Evidence` is the one argument of every lever: the responder's workspace
(the app at HEAD plus the edits accepted so far), the finding, the incident's
live snapshot, the time before which a change "ran fine for a while", and the
configured :class:`Bounds`. :func:`set_fields` turns "these fields to these
values" into byte-exact edits of the declaring file, through the same edit
machinery as history restores, so the edit carries the file's blob id and the
transaction's gate and undo treat it like any fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitmedic.bot.responder.live_blame import last_change_of
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.quantity import GI, whole_bytes
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.reconciler.config import LeversConfig
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, blob_sha
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import Path, lookup


@dataclass(frozen=True)
class Bounds:
    """The ceilings a lever never exceeds, whatever the evidence says."""

    memory_ceiling: int = 8 * GI  # bytes: no container limit above this
    max_replicas: int = 10  # no replica count above this where no HPA bounds it
    wedged_after_s: float = 30.0  # at least this long un-Ready while running: wedged

    @classmethod
    def of(cls, config: LeversConfig) -> Bounds:
        """The bounds a repo's ``levers:`` configures (the schema checked their form)."""
        ceiling = whole_bytes(config.memory_ceiling) or cls.memory_ceiling
        return cls(memory_ceiling=ceiling, max_replicas=config.max_replicas)


@dataclass(frozen=True)
class SeenHealthy:
    """A container the monitor saw Ready and running
    (:mod:`gitmedic.bot.controller.healthy_images`): the image its pod spec named and the
    build it ran (``imageID``), last seen at ``seen``."""

    kind: str
    namespace: str
    workload: str
    container: str
    image: str
    image_id: str
    seen: float


@dataclass(frozen=True)
class Evidence:
    ws: Workspace
    finding: Finding
    live: Snapshot | None
    since: float  # a change older than this ran fine for a while: not the cause
    at: float  # the incident's opening (stamps a restart, deterministically)
    bounds: Bounds = field(default_factory=Bounds)
    healthy: tuple[SeenHealthy, ...] = ()  # images that ran healthy, newest first

    def desired(self, ref: Resource) -> Obj | None:
        return self.ws.states.at(self.ws.head).get(ref.kind, ref.namespace, ref.name)

    def workload(self, ref: Resource | None = None) -> Workload | None:
        """The finding's workload (or ``ref``'s) as the desired state at HEAD declares it."""
        wanted = ref or self.finding.resource
        return self.ws.states.at(self.ws.head).workload(wanted)

    def live_pods(self, wl: Workload) -> list[Obj]:
        """The live pods the workload's selector selects (none without a live snapshot)."""
        if self.live is None:
            return []
        selector = mapping(mapping(wl.obj.spec.get("selector")).get("matchLabels"))
        if not selector:
            selector = wl.template_labels
        return self.live.pods_selected_by(wl.obj.namespace, selector)

    def recent_change(self, ref: Resource, path: Path) -> Commit | None:
        """The newest commit since :attr:`since` that changed ``path`` of ``ref`` (on the
        rendered state; the commit that first brought the object does not count: what it
        added is the object, not a change to one that ran)."""
        return last_change_of(self.ws, ref, path, self.since, introduction=False)


class Lever(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def playbook(self) -> str: ...

    def propose(self, evidence: Evidence) -> Fix | None: ...


def set_fields(
    ev: Evidence,
    target: Resource,
    values: Sequence[tuple[Path, Any]],
    diagnosis: str,
    playbook: str,
) -> Fix | None:
    """``values`` set on ``target`` in its declaring file, as one lever fix (None if the
    file cannot take the edit: a rendered chart, a generated object)."""
    file = ev.ws.file_of(target)
    doc = ev.desired(target)
    if file is None or doc is None:
        return None
    edits: list[Edit] = []
    contents: dict[str, str] = {}
    try:
        for path, value in values:
            edit = _edit_for(file, target, dict(doc.body), path, value)
            edit = edit.with_base(blob_sha(ev.ws.content(file, contents).encode("utf-8")))
            contents = ev.ws.applied([edit], contents)
            edits.append(edit)
    except EditError:
        return None
    return Fix("lever", tuple(edits), contents, diagnosis, playbook)


def _edit_for(file: str, target: Resource, body: Mapping[str, Any], path: Path, value: Any) -> Edit:
    """SET where the field exists, else INSERT at the deepest parent that does (with the
    missing mappings around the value), as ``kubectl patch`` would create them."""
    if lookup(body, path)[0]:
        return Edit(Op.SET, file, target, path, value)
    depth = len(path) - 1
    while depth > 0 and not lookup(body, path[:depth])[0]:
        depth -= 1
    nested: Any = value
    for key in reversed(path[depth + 1 :]):
        nested = {key: nested}
    return Edit(Op.INSERT, file, target, path[: depth + 1], nested)
