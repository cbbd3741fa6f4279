"""What kwok's fake nodes cannot do: report a kubelet's view of a broken container.

kwok marks every scheduled pod Running and Ready, whatever its image. A real
kubelet would report ``ImagePullBackOff`` for a tag the registry lacks, or
``CrashLoopBackOff`` for an entrypoint the image does not have. :class:`FakeKubelet`
plays that part: a ``verdict`` says, per container, what the kubelet would
report (None: it runs), and the pod's status subresource is patched accordingly
(kwok leaves a Running pod's status alone), so the real controllers react: the
Deployment is unavailable, the pod drops out of the Endpoints; once such a pod is
terminating it is deleted at once, as a kubelet does a pod with nothing to stop
(kwok's own pod-delete stage lagged 15 s behind under load). It runs in a
thread, polling the namespace every ``POLL_S``, so the pods of ReplicaSets
created later (the rollouts Flux applies) are reported as well.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.realkube.control_plane import ControlPlane

POLL_S = 1.0
Verdict = Callable[[dict[str, Any]], dict[str, Any] | None]  # container -> kubelet state


def image_missing(images: set[str]) -> Verdict:
    def verdict(container: dict[str, Any]) -> dict[str, Any] | None:
        image = container["image"]
        if image not in images:
            return None
        message = f'Back-off pulling image "{image}": manifest unknown'
        return {"state": {"waiting": {"reason": "ImagePullBackOff", "message": message}}}

    return verdict


def entrypoint_missing(image: str, command: list[str]) -> Verdict:
    """``image`` has no ``command[0]``: the container exits 127 and crash-loops."""

    def verdict(container: dict[str, Any]) -> dict[str, Any] | None:
        if container["image"] != image or container.get("command") != command:
            return None
        reason = f"back-off 40s restarting failed container={container['name']}"
        exited = {"exitCode": 127, "reason": "Error", "message": f"{command[0]}: not found"}
        return {
            "restartCount": 4,
            "lastState": {"terminated": exited},
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": reason}},
        }

    return verdict


def kubelet_status(pod: dict[str, Any], verdicts: list[Verdict]) -> dict[str, Any] | None:
    """The status patch for ``pod``, or None when every container would run."""
    states = [_first(verdicts, c) for c in pod["spec"]["containers"]]
    if not any(states):
        return None
    statuses = [
        {
            "name": c["name"],
            "image": c["image"],
            "imageID": "",
            "ready": state is None,
            "restartCount": 0,
            "started": state is None,
            "state": {"running": {}},
            **(state or {}),
        }
        for c, state in zip(pod["spec"]["containers"], states, strict=True)
    ]
    conditions = [
        {"type": kind, "status": status}
        for kind, status in (
            ("PodScheduled", "True"),
            ("Initialized", "True"),
            ("ContainersReady", "False"),
            ("Ready", "False"),
        )
    ]
    # phase stays Running: kwok's pod-ready stage would take a Pending pod over again
    return {"status": {"phase": "Running", "conditions": conditions, "containerStatuses": statuses}}


def _first(verdicts: list[Verdict], container: dict[str, Any]) -> dict[str, Any] | None:
    for verdict in verdicts:
        state = verdict(container)
        if state is not None:
            return state
    return None


def _reported(pod: dict[str, Any]) -> bool:
    statuses = pod.get("status", {}).get("containerStatuses") or []
    return any("waiting" in s.get("state", {}) for s in statuses)


class FakeKubelet:
    def __init__(self, plane: ControlPlane, namespace: str, verdicts: list[Verdict]) -> None:
        self.plane, self.namespace, self.verdicts = plane, namespace, verdicts
        self.stopped = threading.Event()
        self.reported: list[str] = []  # pod names, in the order they were reported
        self.thread = threading.Thread(target=self._run, daemon=True)

    def report_once(self) -> None:
        pods = self.plane.get_json("pods", "-n", self.namespace)["items"]
        assert isinstance(pods, list)
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp") and _reported(pod):
                self._remove(pod["metadata"]["name"])
                continue
            running = pod.get("status", {}).get("phase") == "Running"
            patch = kubelet_status(pod, self.verdicts) if running and not _reported(pod) else None
            if patch is not None:
                self._patch(pod["metadata"]["name"], patch)

    def _remove(self, name: str) -> None:
        """A kubelet deletes a terminating pod whose containers never ran at once
        (nothing to stop) with a grace period of 0, as its status manager does."""
        try:
            self.plane.kubectl(
                "delete", "pod", name, "-n", self.namespace, "--force", "--grace-period=0"
            )
        except RuntimeError:  # already gone (kwok's pod-delete stage came first)
            return

    def _patch(self, name: str, patch: dict[str, Any]) -> None:
        try:
            self.plane.kubectl(
                "patch",
                "pod",
                name,
                "-n",
                self.namespace,
                "--subresource=status",
                "--type=merge",
                "-p",
                json.dumps(patch),
            )
        except RuntimeError:  # the pod went away between the list and the patch
            return
        self.reported.append(name)

    def _run(self) -> None:
        while not self.stopped.wait(POLL_S):
            try:
                self.report_once()
            except RuntimeError:  # the API server is busy (kubectl timed out): next poll
                continue


@contextmanager
def fake_kubelet(
    plane: ControlPlane, namespace: str, verdicts: list[Verdict]
) -> Iterator[FakeKubelet]:
    kubelet = FakeKubelet(plane, namespace, verdicts)
    kubelet.thread.start()
    try:
        yield kubelet
    finally:
        kubelet.stopped.set()
        kubelet.thread.join(timeout=30)
