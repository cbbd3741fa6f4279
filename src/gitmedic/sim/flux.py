"""The status Flux's controllers give the Flux objects an app deploys.

The sim itself does what Flux would (it renders a HelmRelease's chart and applies
its objects, applies a Kustomization's folder), so each Flux object it applies
reads as reconciled: ``Ready=True`` (and ``Released`` for a release), at the
generation applied. Without a status, Argo CD's health rule holds a HelmRelease
at Progressing forever, so the app never reads Healthy and every fix would time
out as "not deployed": a fault the sim invented (Flux's kustomize-helm example).
A release whose chart does not render never gets here: the revision does not
load, and the engine says so.
"""

from __future__ import annotations

from typing import Any

from gitmedic.detectors.snapshot import Obj
from gitmedic.sim.conditions import condition

__all__ = ["is_flux", "reconciled"]

_REASONS = {
    "HelmRelease": ("InstallSucceeded", "Helm install succeeded for release {name}"),
    "Kustomization": ("ReconciliationSucceeded", "Applied revision: {revision}"),
}


def is_flux(obj: Obj) -> bool:
    return str(obj.body.get("apiVersion", "")).split("/")[0].endswith(".toolkit.fluxcd.io")


def reconciled(obj: Obj, since: str, revision: str) -> dict[str, Any]:
    reason, message = _REASONS.get(obj.kind, ("Succeeded", "stored artifact for {revision}"))
    text = message.format(name=obj.name, revision=revision or "unknown")
    generation = obj.metadata.get("generation") or 1
    conditions = [condition("Ready", True, reason, text, since)]
    if obj.kind == "HelmRelease":  # Flux marks the release made, beside Ready
        conditions.append(condition("Released", True, reason, text, since))
    return {"observedGeneration": generation, "conditions": conditions}
