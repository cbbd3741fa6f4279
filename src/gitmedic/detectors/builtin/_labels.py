"""Kubernetes label selectors (``matchLabels`` + ``matchExpressions``) for detectors.

Service selectors are plain equality maps (see ``Snapshot.workloads_selected_by``);
NetworkPolicies and most other objects use the richer ``LabelSelector``. An empty
LabelSelector selects everything; a malformed expression selects nothing, so a
broken policy is never read as permissive by accident of parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.detectors.snapshot import JSON, as_list, mapping


def label_selector_matches(selector: JSON, labels: Mapping[str, Any]) -> bool:
    """Does a LabelSelector (``{matchLabels, matchExpressions}``) select these labels?"""
    for key, value in mapping(selector.get("matchLabels")).items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    return all(
        _expression_matches(mapping(e), labels) for e in as_list(selector.get("matchExpressions"))
    )


def _expression_matches(expr: JSON, labels: Mapping[str, Any]) -> bool:
    key = str(expr.get("key", ""))
    operator = expr.get("operator")
    values = {str(v) for v in as_list(expr.get("values"))}
    present = key in labels
    if operator == "In":
        return present and str(labels[key]) in values
    if operator == "NotIn":
        return not present or str(labels[key]) not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    return False
