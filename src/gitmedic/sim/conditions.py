"""Status conditions in the API's shape, shared by the controllers that write them."""

from __future__ import annotations

from typing import Any


def condition(
    kind: str, ok: bool, reason: str, message: str, since: str, *, updated: bool = False
) -> dict[str, Any]:
    """One ``status.conditions`` entry; ``updated`` adds ``lastUpdateTime`` (Deployments)."""
    out: dict[str, Any] = {
        "type": kind,
        "status": "True" if ok else "False",
        "reason": reason,
        "message": message,
    }
    if updated:
        out["lastUpdateTime"] = since
    out["lastTransitionTime"] = since
    return out
