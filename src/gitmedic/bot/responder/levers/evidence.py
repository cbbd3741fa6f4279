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

from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.quantity import GI
from gitmedic.detectors.snapshot import Obj, Snapshot, Workload, mapping
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, blob_sha, same
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import Path, lookup

# How far back a lever looks for a change that may be the cause instead of the runtime.
RECENT_COMMITS = 50


@dataclass(frozen=True)
class Bounds:
    """The ceilings a lever never exceeds, whatever the evidence says."""

    memory_ceiling: int = 8 * GI  # bytes: no container limit above this
    max_replicas: int = 10  # no replica count above this where no HPA bounds it
    wedged_after_s: float = 30.0  # at least this long un-Ready while running: wedged


@dataclass(frozen=True)
class Evidence:
    ws: Workspace
    finding: Finding
    live: Snapshot | None
    since: float  # a change older than this ran fine for a while: not the cause
    at: float  # the incident's opening (stamps a restart, deterministically)
    bounds: Bounds = field(default_factory=Bounds)

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
        """The newest commit since :attr:`since` that changed ``path`` of ``ref``, if any.

        Judged on the rendered desired state of each commit and its parent, so a change
        made where the field is really set (an overlay's patch, a Helm values file, a
        base) counts as much as one in the file that declares the object. The commit
        that first brought the object does not count: what it added is the object, not
        a change to one that ran.
        """
        states = self.ws.states
        # The app's own paths, and the files that declare and set the field: a shared
        # base or values file may live outside the app's folder.
        files = {self.ws.file_of(ref), self.ws.file_of(ref, path=path)} - {None}
        paths = [*states.repo.history_paths(), *sorted(f for f in files if f)]
        for commit in states.repo.git.log(*paths, max_count=RECENT_COMMITS):  # newest first
            if commit.timestamp < self.since:
                break
            if not commit.parents:
                continue
            after = states.at(commit.sha).get(ref.kind, ref.namespace, ref.name)
            before = states.at(commit.parents[0]).get(ref.kind, ref.namespace, ref.name)
            if after is None or before is None:
                continue
            (had, old), (has, new) = lookup(before.body, path), lookup(after.body, path)
            if had != has or not same(old, new):
                return commit
        return None


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
