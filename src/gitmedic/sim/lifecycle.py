"""A pod at a moment: its status and events, from its fate and the time since creation.

Everything here is a pure function of (fate, creation time, now), so the same
pod renders the same way whenever it is asked about, and recomputing the whole
cluster at a new time needs no stored state. Back-off follows the kubelet:
10 s, 20 s, 40 s ... capped at 300 s, for image pulls and crash restarts alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gitmedic.sim import ids
from gitmedic.sim.catalog import build_digest
from gitmedic.sim.fate import ContainerFate, Outcome, PodFate
from gitmedic.sim.stamps import iso

PULL_ERROR_S = 2.0  # ErrImagePull shows this long after each failed attempt
INIT_RUN_S = 1.0
MAX_BACKOFF_S = 300.0


def backoff(k: int) -> float:
    return min(10.0 * 2.0**k, MAX_BACKOFF_S)


@dataclass(frozen=True)
class EventSpec:
    reason: str
    message: str
    first: float
    last: float
    count: int = 1
    warning: bool = False
    field_path: str = ""
    component: str = "kubelet"


@dataclass
class ContainerView:
    status: dict[str, Any]
    ready: bool
    started: bool
    done: bool  # an init container that completed
    ready_at: float | None
    events: list[EventSpec] = field(default_factory=list)


@dataclass(frozen=True)
class Attempts:
    """Restart (or pull) attempts up to now: starts[k], and whether the last is live."""

    starts: tuple[float, ...]
    ends: tuple[float, ...]


def attempts(start: float, run_s: float, now: float) -> Attempts:
    starts: list[float] = []
    ends: list[float] = []
    t, k = start, 0
    while t <= now and k < 10_000:
        starts.append(t)
        ends.append(t + run_s)
        t = t + run_s + backoff(k)
        k += 1
    return Attempts(tuple(starts), tuple(ends))


def container_view(fate: ContainerFate, pod_uid: str, start: float, now: float) -> ContainerView:
    base = {
        "name": fate.name,
        "image": fate.image,
        "imageID": "",
        "restartCount": 0,
        "ready": False,
    }
    path = f"spec.{'initContainers' if fate.init else 'containers'}{{{fate.name}}}"
    if now < start:
        return ContainerView(_waiting(base, "PodInitializing", ""), False, False, False, None)
    if fate.outcome is Outcome.PULL_FAILS:
        return _pull_failing(fate, base, path, start, now)
    if fate.outcome is Outcome.CONFIG_ERROR:
        view = ContainerView(
            _waiting(base, "CreateContainerConfigError", fate.message), False, False, False, None
        )
        view.events += _pulled(fate, path, start)
        view.events.append(
            EventSpec(
                "Failed", f"Error: {fate.message}", start, now, _count(start, now, 10), True, path
            )
        )
        return view
    if fate.outcome is Outcome.CRASHES:
        return _crashing(fate, base, path, pod_uid, start, now)
    return _running(fate, base, path, pod_uid, start, now)


def _pull_failing(
    fate: ContainerFate, base: dict[str, Any], path: str, start: float, now: float
) -> ContainerView:
    tries = attempts(start, PULL_ERROR_S, now)
    last = tries.starts[-1]
    reason = "ErrImagePull" if now < tries.ends[-1] else "ImagePullBackOff"
    message = (
        f"rpc error: code = NotFound desc = {fate.message}"
        if reason == "ErrImagePull"
        else f'Back-off pulling image "{fate.image}"'
    )
    n = len(tries.starts)
    events = [
        EventSpec("Pulling", f'Pulling image "{fate.image}"', start, last, n, False, path),
        EventSpec(
            "Failed",
            f'Failed to pull image "{fate.image}": rpc error: code = NotFound '
            f"desc = {fate.message}",
            start,
            last,
            n,
            True,
            path,
        ),
        EventSpec("Failed", "Error: ErrImagePull", start, last, n, True, path),
    ]
    if n > 1 or reason == "ImagePullBackOff":
        first_backoff = tries.ends[0]
        events += [
            EventSpec(
                "BackOff",
                f'Back-off pulling image "{fate.image}"',
                first_backoff,
                now,
                max(1, n * 2 - 1),
                False,
                path,
            ),
            EventSpec(
                "Failed",
                "Error: ImagePullBackOff",
                first_backoff,
                now,
                max(1, n * 2 - 1),
                True,
                path,
            ),
        ]
    return ContainerView(_waiting(base, reason, message), False, False, False, None, events)


def _crashing(
    fate: ContainerFate, base: dict[str, Any], path: str, pod_uid: str, start: float, now: float
) -> ContainerView:
    runs = attempts(start, fate.run_s, now)
    k = len(runs.starts) - 1
    running = now < runs.ends[k]
    finished = k - 1 if running else k
    status = {**base, "restartCount": k, "started": running}
    if running:
        status["state"] = {"running": {"startedAt": iso(runs.starts[k])}}
    else:
        msg = f"back-off {backoff(k):.0f}s restarting failed container={fate.name} pod="
        status["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": msg}}
    if finished >= 0:
        status["lastState"] = {"terminated": _terminated(fate, runs, finished, pod_uid)}
    status["containerID"] = _cid(pod_uid, fate.name, k)
    status["imageID"] = _image_id(fate.image, fate.build)
    events = list(_pulled(fate, path, start))
    events += [
        EventSpec(
            "Created", f"Created container {fate.name}", start, runs.starts[k], k + 1, False, path
        ),
        EventSpec(
            "Started", f"Started container {fate.name}", start, runs.starts[k], k + 1, False, path
        ),
    ]
    if finished >= 1 or not running:
        events.append(
            EventSpec(
                "BackOff",
                f"Back-off restarting failed container {fate.name} in pod",
                runs.ends[0],
                now,
                finished + 1,
                True,
                path,
            )
        )
    if fate.liveness_kill:
        events += [
            EventSpec(
                "Unhealthy",
                fate.probe_failure,
                runs.ends[0],
                runs.ends[finished],
                finished + 1,
                True,
                path,
            ),
            EventSpec(
                "Killing",
                f"Container {fate.name} failed liveness probe, will be restarted",
                runs.ends[0],
                runs.ends[finished],
                finished + 1,
                False,
                path,
            ),
        ]
    return ContainerView(status, False, running, False, None, events)


def _running(
    fate: ContainerFate, base: dict[str, Any], path: str, pod_uid: str, start: float, now: float
) -> ContainerView:
    if fate.init and fate.outcome is Outcome.RUNS and now >= start + INIT_RUN_S:
        term = {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": iso(start),
            "finishedAt": iso(start + INIT_RUN_S),
            "containerID": _cid(pod_uid, fate.name, 0),
        }
        status = {**base, "state": {"terminated": term}, "ready": True, "started": False}
        return ContainerView(
            _ids(status, fate, pod_uid), True, False, True, None, _started(fate, path, start)
        )
    ready_at = None if fate.ready_delay_s is None or fate.init else start + fate.ready_delay_s
    ready = ready_at is not None and now >= ready_at
    status = {
        **base,
        "ready": ready,
        "started": True,
        "state": {"running": {"startedAt": iso(start)}},
    }
    events = _started(fate, path, start)
    if fate.probe_failure:
        events.append(
            EventSpec(
                "Unhealthy",
                fate.probe_failure,
                start + 1,
                now,
                _count(start + 1, now, 10),
                True,
                path,
            )
        )
    return ContainerView(_ids(status, fate, pod_uid), ready, True, False, ready_at, events)


def _terminated(fate: ContainerFate, runs: Attempts, k: int, pod_uid: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "exitCode": fate.exit_code,
        "reason": fate.exit_reason,
        "startedAt": iso(runs.starts[k]),
        "finishedAt": iso(runs.ends[k]),
        "containerID": _cid(pod_uid, fate.name, k),
    }
    if fate.message:
        out["message"] = fate.message
    return out


def _pulled(fate: ContainerFate, path: str, start: float) -> Iterator[EventSpec]:
    yield EventSpec("Pulling", f'Pulling image "{fate.image}"', start, start, 1, False, path)
    yield EventSpec(
        "Pulled", f'Successfully pulled image "{fate.image}"', start, start, 1, False, path
    )


def _started(fate: ContainerFate, path: str, start: float) -> list[EventSpec]:
    return [
        *_pulled(fate, path, start),
        EventSpec("Created", f"Created container {fate.name}", start, start, 1, False, path),
        EventSpec("Started", f"Started container {fate.name}", start, start, 1, False, path),
    ]


def _waiting(base: dict[str, Any], reason: str, message: str) -> dict[str, Any]:
    waiting = {"reason": reason, **({"message": message} if message else {})}
    return {**base, "started": False, "state": {"waiting": waiting}}


def _ids(status: dict[str, Any], fate: ContainerFate, pod_uid: str) -> dict[str, Any]:
    return {
        **status,
        "containerID": _cid(pod_uid, fate.name, 0),
        "imageID": _image_id(fate.image, fate.build),
    }


def _cid(pod_uid: str, name: str, k: int) -> str:
    return "containerd://" + ids.digest("container", pod_uid, name, k).hex() * 2


def _image_id(image: str, build: str = "") -> str:
    if "@sha256:" in image:
        return image  # pulled by digest: that build
    repo = image.rsplit(":", 1)[0] if "@" not in image else image.split("@")[0]
    return f"{repo}@sha256:{build_digest(image, build)}"


def _count(first: float, now: float, every: float) -> int:
    return max(1, int((now - first) // every) + 1)


def pod_start(created: float, seed: int, name: str) -> float:
    """When the kubelet starts a scheduled pod's first container (image pull time)."""
    return created + ids.between(0.5, 2.5, "pull", seed, name)


def inits_done(fates: PodFate, start: float) -> float | None:
    """When the last init container completes, or None if one never does."""
    if any(f.outcome is not Outcome.RUNS for f in fates.inits):
        return None
    return start + INIT_RUN_S * len(fates.inits)
