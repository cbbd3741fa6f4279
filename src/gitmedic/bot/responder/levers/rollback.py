"""Roll a container back to the image that last ran healthy, when no commit explains the fault.

Evidence: a ``pod-crashloop`` (rule ``crashloop``) or ``pod-image-pull`` finding
on a container, and the monitor's record of what ran healthy there
(:class:`~.evidence.SeenHealthy`, kept by :mod:`gitmedic.bot.controller.healthy_images`
across restarts): the newest build seen Ready and running that is not the one
failing now. A recent commit that changed anything in the container or pod that
can explain the symptom (:data:`~gitmedic.bot.responder.live_blame.EXPLAINS`)
is the restores' and the bisect's to judge, so the lever declines; so it does
when the failing build is one that ran healthy (the image is not the cause) or
nothing healthy was ever seen.

The edit sets the container's ``image``: to the healthy image itself when the
spec names another now (an image changed long ago, or where no commit shows it),
else to that build by digest (``repo@sha256:...``), since the tag itself now
names the failing build (pushed again out of band).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from gitmedic.bot.responder.levers.evidence import Evidence, SeenHealthy, set_fields
from gitmedic.bot.responder.levers.memory import container_path
from gitmedic.bot.responder.live_blame import EXPLAINS, symptom_of
from gitmedic.bot.responder.playbooks import POD_SPEC_PATH
from gitmedic.bot.responder.workspace import Fix
from gitmedic.detectors.snapshot import Workload, as_list, mapping
from gitmedic.reconciler.manifests.paths import Path

PLAYBOOK = "image-ran-healthy"
SYMPTOMS = frozenset({"crash", "image"})


@dataclass(frozen=True)
class RollbackImage:
    id: str = "rollback-image"
    playbook: str = PLAYBOOK

    def propose(self, ev: Evidence) -> Fix | None:
        f = ev.finding
        symptom = symptom_of(f)
        wl = ev.workload()
        name = str(f.params.get("container", ""))
        if symptom not in SYMPTOMS or wl is None or not name:
            return None
        container = next((c for c in wl.containers(init=False) if c.name == name), None)
        current = str(container.body.get("image") or "") if container else ""
        failing = _failing_builds(ev, wl, name)
        healthy = last_healthy(ev.healthy, wl, name, failing) if current else None
        # the record first: the history walk is the expensive part
        if healthy is None or _explained(ev, wl, name, symptom or ""):
            return None
        new = healthy.image if healthy.image != current else pinned(current, healthy.image_id)
        if new is None or new == current:
            return None
        text = self._text(ev, name, current, new, healthy, failing)
        path = (*container_path(wl, name), "image")
        return set_fields(ev, wl.ref, [(path, new)], text, self.playbook)

    def _text(
        self,
        ev: Evidence,
        name: str,
        current: str,
        new: str,
        healthy: SeenHealthy,
        failing: frozenset[str],
    ) -> str:
        f = ev.finding
        when = datetime.fromtimestamp(healthy.seen, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        now = f"runs build {', '.join(sorted(failing))}" if failing else "cannot pull it"
        return (
            f"{f.summary} ({f.detector}/{f.rule}): {name} names {current} and {now}; the "
            f"monitor last saw {healthy.image} (build {healthy.image_id}) run healthy at "
            f"{when}, and no recent commit changed what can explain the fault, so no commit "
            f"is its cause. Lever {self.id}: set {name}'s image {current} -> {new}, the last "
            f"image that ran healthy. Risk medium or higher (an image reference Git never "
            f"held): it runs older code; undone if the pods do not become Ready."
        )


ROLLBACK_IMAGE = RollbackImage()


def last_healthy(
    seen: tuple[SeenHealthy, ...], wl: Workload, container: str, failing: frozenset[str]
) -> SeenHealthy | None:
    """The newest record of the container whose build is not one failing now."""
    for record in seen:  # newest first
        mine = (record.kind, record.namespace, record.workload, record.container)
        if mine != (wl.obj.kind, wl.obj.namespace, wl.obj.name, container):
            continue
        if record.image_id in failing:
            return None  # a build that ran healthy fails now: the image is not the cause
        return record
    return None


def pinned(image: str, image_id: str) -> str | None:
    """``image``'s repository at the build ``image_id`` names (``repo@sha256:...``)."""
    _, at, digest = image_id.partition("@sha256:")
    if not at or not digest:
        return None
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo.rsplit(":", 1)[0]
    return f"{repo}@sha256:{digest}"


def _failing_builds(ev: Evidence, wl: Workload, name: str) -> frozenset[str]:
    """The builds the container's un-Ready pods run now (none for a pull that fails)."""
    out = set()
    for pod in ev.live_pods(wl):
        for status in (mapping(s) for s in as_list(pod.status.get("containerStatuses"))):
            if status.get("name") == name and not status.get("ready") and status.get("imageID"):
                out.add(str(status.get("imageID")))
    return frozenset(out)


def _explained(ev: Evidence, wl: Workload, name: str, symptom: str) -> bool:
    """Did a recent commit change a field of the container or pod that can explain it?"""
    return any(ev.recent_change(wl.ref, p) for p in _explaining_paths(wl, name, symptom))


def _explaining_paths(wl: Workload, name: str, symptom: str) -> list[Path]:
    pod = tuple(POD_SPEC_PATH.get(wl.obj.kind, "spec.template.spec").split("."))
    mine = container_path(wl, name)
    paths: list[Path] = []
    for group in sorted(EXPLAINS.get(symptom, frozenset())):
        where, _, field = group.partition(".")
        if field:  # "container" alone (the container replaced) shows in its fields' changes
            paths.append((*mine, field) if where == "container" else (*pod, field))
    return paths
