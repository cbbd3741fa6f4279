"""Equality selectors (a Service's ``spec.selector``) over labelled things, by index.

A pod's labels are its template's plus those its controller adds
(:mod:`gitmedic.detectors.pod_owners`): a Service selecting
``statefulset.kubernetes.io/pod-name: web-0`` selects pod 0 of StatefulSet
``web``. Pairs on template labels are answered from an index (start from the
rarest pair); controller-added pairs are then checked per workload.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from gitmedic.detectors.pod_owners import controller_label_keys, controller_label_matches

JSON = Mapping[str, Any]
T = TypeVar("T")
LabelIndex = dict[tuple[str, str, str], list[T]]


def selector_matches(selector: JSON, labels: JSON) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def label_index(items: Iterable[T], key: Callable[[T], tuple[str, JSON]]) -> LabelIndex[T]:
    """(namespace, label key, value) -> the items carrying that label."""
    index: LabelIndex[T] = defaultdict(list)
    for item in items:
        namespace, labels = key(item)
        for k, v in labels.items():
            index[(namespace, str(k), str(v))].append(item)
    return index


def select(
    index: LabelIndex[T], namespace: str, selector: JSON, labels_of: Callable[[T], JSON]
) -> list[T]:
    if not selector:
        return []
    # Start from the rarest selector pair, then filter by the rest.
    candidates = min(
        (index.get((namespace, str(k), str(v)), []) for k, v in selector.items()), key=len
    )
    return [c for c in candidates if selector_matches(selector, labels_of(c))]


def select_pod_owners(
    index: LabelIndex[T],
    in_namespace: list[T],
    namespace: str,
    selector: JSON,
    owner: Callable[[T], tuple[str, str, JSON]],
) -> list[T]:
    """Workloads whose pods match ``selector``, counting the labels controllers add.

    ``owner(item)`` is (kind, name, template labels). A pair whose key some
    controller adds matches a workload whose template carries it, or whose
    controller puts that value there; every other pair must be in the template.
    """
    if not selector:
        return []
    added = {k for k in selector if _controller_added(str(k))}
    if not added:
        return select(index, namespace, selector, lambda item: owner(item)[2])
    plain = {k: v for k, v in selector.items() if k not in added}
    candidates = (
        select(index, namespace, plain, lambda item: owner(item)[2]) if plain else in_namespace
    )
    return [c for c in candidates if _added_pairs_match(owner(c), {k: selector[k] for k in added})]


_ALL_ADDED = frozenset().union(
    *(
        controller_label_keys(kind)
        for kind in ("StatefulSet", "DaemonSet", "Deployment", "Rollout", "Job", "CronJob")
    )
)


def _controller_added(key: str) -> bool:
    return key in _ALL_ADDED


def _added_pairs_match(owner: tuple[str, str, JSON], pairs: JSON) -> bool:
    kind, name, labels = owner
    return all(
        labels.get(k) == v or controller_label_matches(kind, name, str(k), str(v))
        for k, v in pairs.items()
    )
