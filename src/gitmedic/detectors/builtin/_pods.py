"""Reading live pod state, shared by the pod detectors.

Conventions every pod detector follows:

- A finding names the top-level workload (``Snapshot.owner_workload``: the
  Deployment behind a ReplicaSet, the StatefulSet, or the bare Pod) and lists
  the affected pods in ``related``: one finding per workload, container and rule,
  however many replicas show the state.
- ``params`` hold only what stays the same from one evaluation to the next
  (container, reason, last termination reason, exit codes), because the
  fingerprint hashes them and fire/clear persistence keys on the fingerprint.
  Restart counts, pod names and messages (kubelet's carry back-off durations)
  go into ``evidence``.
- A pod being deleted (``metadata.deletionTimestamp`` set) is not judged: it is
  leaving with the revision it was made from, and during a rollout that replaces
  crashing pods it reports the old revision's failure for its whole grace period,
  which would make a fix that works look like it did not (:func:`current_pods`).
- Time is never the wall clock: ages are measured against the newest timestamp
  found in the snapshot (:func:`snapshot_now`), so a detector is a pure function
  of its snapshot and a recorded snapshot gives the same findings forever.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import JSON, Obj, Snapshot, as_list, mapping


@dataclass(frozen=True)
class ContainerState:
    """One entry of a pod's ``containerStatuses`` or ``initContainerStatuses``."""

    pod: Obj
    status: JSON
    init: bool

    @property
    def name(self) -> str:
        return str(self.status.get("name", ""))

    @property
    def waiting(self) -> JSON:
        return mapping(mapping(self.status.get("state")).get("waiting"))

    @property
    def running(self) -> JSON:
        return mapping(mapping(self.status.get("state")).get("running"))

    @property
    def terminated(self) -> JSON:
        return mapping(mapping(self.status.get("state")).get("terminated"))

    @property
    def last_terminated(self) -> JSON:
        return mapping(mapping(self.status.get("lastState")).get("terminated"))

    @property
    def restarts(self) -> int:
        count = self.status.get("restartCount", 0)
        return count if isinstance(count, int) else 0

    @property
    def spec(self) -> JSON:
        """The container's spec in the pod (its image, its restartPolicy for sidecars)."""
        key = "initContainers" if self.init else "containers"
        for c in as_list(self.pod.spec.get(key)):
            if mapping(c).get("name") == self.name:
                return mapping(c)
        return {}


def is_ready(obj: Obj) -> bool:
    """A Pod's or Node's ``Ready`` condition is True."""
    return any(
        mapping(c).get("type") == "Ready" and mapping(c).get("status") == "True"
        for c in as_list(obj.status.get("conditions"))
    )


def container_states(pod: Obj, *, init: bool | None = None) -> Iterator[ContainerState]:
    """The pod's container statuses: init ones (``init=True``), regular ones, or both."""
    if init is not False:
        for s in as_list(pod.status.get("initContainerStatuses")):
            yield ContainerState(pod, mapping(s), True)
    if init is not True:
        for s in as_list(pod.status.get("containerStatuses")):
            yield ContainerState(pod, mapping(s), False)


@dataclass(frozen=True)
class Group:
    """Container states of one workload's pods that share a container and a rule."""

    workload: Resource
    container: str
    rule: str
    states: tuple[ContainerState, ...]

    @property
    def pods(self) -> list[Resource]:
        return sorted({s.pod.ref for s in self.states})

    @property
    def first(self) -> ContainerState:
        return self.states[0]


def current_pods(snapshot: Snapshot) -> Iterator[Obj]:
    """The pods that are not being deleted (see the module doc)."""
    for pod in snapshot.of_kind("Pod"):
        if mapping(pod.body.get("metadata")).get("deletionTimestamp") is None:
            yield pod


def grouped(
    snapshot: Snapshot, matches: Callable[[ContainerState], str | None], *, init: bool | None
) -> list[Group]:
    """Group the container states ``matches`` gives a rule by (workload, container, rule)."""
    groups: dict[tuple[Resource, str, str], list[ContainerState]] = defaultdict(list)
    for pod in current_pods(snapshot):
        for state in container_states(pod, init=init):
            rule = matches(state)
            if rule:
                key = (snapshot.owner_workload(pod), state.name, rule)
                groups[key].append(state)
    return [
        Group(wl, container, rule, tuple(sorted(states, key=lambda s: s.pod.name)))
        for (wl, container, rule), states in sorted(groups.items())
    ]


def pods_summary(states: Iterable[ContainerState]) -> str:
    return ", ".join(f"{s.pod.name} (restarts {s.restarts})" for s in states)


def latest_event(snapshot: Snapshot, pod: Obj, reasons: Iterable[str]) -> Obj | None:
    wanted = set(reasons)
    events = [e for e in snapshot.events_for(pod.ref) if e.body.get("reason") in wanted]
    return events[-1] if events else None


def event_message(event: Obj | None) -> str:
    return str(event.body.get("message", "")) if event is not None else ""


# -- time ----------------------------------------------------------------------------


def parse_time(value: Any) -> dt.datetime | None:
    """An RFC 3339 timestamp (as the API sends it, or as YAML loaded it), or None."""
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def snapshot_now(snapshot: Snapshot) -> dt.datetime | None:
    """When the snapshot was read, else the newest timestamp of its pods and events."""
    return snapshot.derived("pods.now", lambda: _newest(snapshot))


def age_seconds(snapshot: Snapshot, since: Any) -> float | None:
    now, start = snapshot_now(snapshot), parse_time(since)
    if now is None or start is None:
        return None
    return (now - start).total_seconds()


def _newest(snapshot: Snapshot) -> dt.datetime | None:
    stamps = [snapshot.taken_at, *_timestamps(snapshot)]
    times = [t for t in map(parse_time, stamps) if t is not None]
    return max(times, default=None)


def _timestamps(snapshot: Snapshot) -> Iterator[Any]:
    for ev in snapshot.of_kind("Event"):
        b = ev.body
        yield b.get("lastTimestamp") or b.get("eventTime") or b.get("firstTimestamp")
    for pod in snapshot.of_kind("Pod"):
        yield pod.metadata.get("creationTimestamp")
        yield pod.status.get("startTime")
        for cond in as_list(pod.status.get("conditions")):
            yield mapping(cond).get("lastTransitionTime")
        for state in container_states(pod):
            yield state.running.get("startedAt")
            yield state.terminated.get("finishedAt")
            yield state.last_terminated.get("finishedAt")
