"""Pod anti-affinity against a workload's own pods: how many may share a domain.

A *required* pod anti-affinity term whose label selector matches the
workload's own pod template labels (and whose namespaces include its own)
allows at most one of its pods per value of the term's ``topologyKey``:
per node for ``kubernetes.io/hostname``, per zone for a zone label. (A node
without the label is no domain at all: the scheduler lets any number of such
pods onto it.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gitmedic.detectors.snapshot import JSON, Workload, as_list, mapping


def label_selector_matches(selector: object, labels: JSON) -> bool:
    """A metav1.LabelSelector: an empty selector matches all, a missing one none."""
    if not isinstance(selector, Mapping):
        return False
    match_labels = mapping(selector.get("matchLabels"))
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    return all(_holds(mapping(e), labels) for e in as_list(selector.get("matchExpressions")))


def self_exclusive_terms(wl: Workload) -> Iterator[tuple[int, str]]:
    """(index, topology key) of required anti-affinity terms selecting the workload's own pods."""
    anti = mapping(mapping(wl.pod_spec.get("affinity")).get("podAntiAffinity"))
    for index, raw in enumerate(
        as_list(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        term = mapping(raw)
        key = term.get("topologyKey")
        if not isinstance(key, str) or not key:
            continue
        if _covers_namespace(term, wl.obj.namespace) and label_selector_matches(
            term.get("labelSelector"), wl.template_labels
        ):
            yield index, key


def _covers_namespace(term: JSON, namespace: str) -> bool:
    namespaces = [str(n) for n in as_list(term.get("namespaces"))]
    selector = term.get("namespaceSelector")
    if not namespaces and selector is None:
        return True  # the pod's own namespace
    # An empty namespaceSelector means every namespace; a non-empty one needs the
    # Namespace's labels, which we do not judge.
    return namespace in namespaces or selector == {}


def _holds(expr: JSON, labels: JSON) -> bool:
    key = str(expr.get("key", ""))
    values = [str(v) for v in as_list(expr.get("values"))]
    operator = expr.get("operator")
    if operator == "In":
        return key in labels and str(labels[key]) in values
    if operator == "NotIn":
        return key not in labels or str(labels[key]) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False
