"""A node that goes NotReady (the ``node-not-ready`` fault), as the API shows it.

The kubelet reports ``Ready=False`` (its container runtime is down) and the node
lifecycle controller taints the node ``node.kubernetes.io/not-ready`` and marks
the pods bound to it not Ready (``NodeNotReady``): they stay bound, no longer
serve, and new pods are not scheduled there. The sim does not model the taint
eviction after ``tolerationSeconds``: a node that flaps NotReady and Ready
resets it, which is when pods sit on it failing and keeping them off it (node
affinity, in Git) is the lever. A pod created before the node went NotReady was
bound while it was Ready, so it keeps its placement.
"""

from __future__ import annotations

from typing import Any

from gitmedic.sim.pods import PodView
from gitmedic.sim.stamps import iso

TAINT = "node.kubernetes.io/not-ready"


def not_ready_node(body: dict[str, Any], since: float) -> dict[str, Any]:
    """The Node object as the API shows it once its kubelet reports NotReady."""
    stamp = iso(since)
    status = dict(body["status"])
    conditions = [dict(c) for c in status["conditions"]]
    for c in conditions:
        if c["type"] == "Ready":
            c.update(
                status="False",
                reason="KubeletNotReady",
                message="container runtime is down: PLEG is not healthy",
                lastTransitionTime=stamp,
            )
    status["conditions"] = conditions
    taints = [{"key": TAINT, "effect": e, "timeAdded": stamp} for e in ("NoSchedule", "NoExecute")]
    return {**body, "spec": {**body["spec"], "taints": taints}, "status": status}


def stranded(view: PodView, since: float) -> PodView:
    """A pod bound to a NotReady node: not Ready, not serving (the controller marked it)."""
    status = dict(view.body["status"])
    stamp = iso(since)
    conditions = []
    for c in status.get("conditions") or []:
        if c.get("type") in ("Ready", "ContainersReady"):
            c = {**c, "status": "False", "reason": "NodeNotReady", "lastTransitionTime": stamp}
        conditions.append(c)
    status["conditions"] = conditions
    status["containerStatuses"] = [
        {**s, "ready": False} for s in status.get("containerStatuses") or []
    ]
    view.body = {**view.body, "status": status}
    view.ready, view.ready_at, view.serving = False, None, False
    return view
