"""A workload's selector does not select its own pod template.

The API server rejects such a Deployment, StatefulSet, DaemonSet or ReplicaSet
("selector does not match template labels"), so a sync that carries it fails
and the workload stays at its previous revision (or never exists). An empty or
missing selector is the same rejection for ``apps/v1`` (older API versions
defaulted it). Jobs are skipped: their selector is generated unless
``manualSelector`` is set.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.builtin._labels import label_selector_matches
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Obj, Snapshot, mapping
from gitmedic.detectors.spec import DetectorSpec, Scope

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")

SPEC = DetectorSpec(
    id="selector-template-mismatch",
    description="A workload's spec.selector does not match its pod template's labels.",
    kinds=frozenset(KINDS),
    severity=Severity.CRITICAL,
    remediation=(
        "Make spec.selector.matchLabels a subset of spec.template.metadata.labels "
        "(a Deployment's selector is immutable: change the template labels, not the selector)."
    ),
    scope=Scope.DESIRED,
    certain_because=("the API server rejects a selector that does not match its template's labels"),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    for kind in KINDS:
        for obj in snapshot.of_kind(kind):
            selector = mapping(obj.spec.get("selector"))
            wl = snapshot.workload(obj.ref)
            labels = wl.template_labels if wl else {}
            if _selects(selector, labels) or (not selector and _defaults_selector(obj)):
                continue
            shown = dict(mapping(selector.get("matchLabels")))
            yield SPEC.finding(
                obj.ref,
                f"{kind} {obj.name}'s selector {shown or '(empty)'} does not match "
                f"its pod template's labels {dict(labels) or '(none)'}",
                evidence="the API server rejects it: selector does not match template labels",
                params={
                    "path": "spec.selector.matchLabels",
                    "selector": shown,
                    "labels": dict(labels),
                },
            )


def _defaults_selector(obj: Obj) -> bool:
    """Before apps/v1 (extensions/v1beta1, apps/v1beta1/2) a missing selector defaulted
    to the template's labels."""
    return obj.ref.api_version != "apps/v1"


def _selects(selector: dict[str, object] | object, labels: object) -> bool:
    if not isinstance(selector, dict) or not isinstance(labels, dict):
        return False
    has_terms = bool(mapping(selector.get("matchLabels")) or selector.get("matchExpressions"))
    return has_terms and label_selector_matches(selector, labels)
