"""A compiled rule as a runner :class:`~gitmedic.detectors.spec.Detector`.

The rule's expressions see plain JSON: ``object`` (the object's body), ``podSpec``
(its pod template spec when it is a top-level workload, else ``{}``) and, for a
rule that refines a built-in detector, ``finding`` (that detector's finding as in
``--format json``, less ``related`` and ``fingerprint``). Each value is checked
against the input bound before CEL sees it. A refining rule reuses its base
detector's findings on the same snapshot (:func:`shared_findings`), so the monitor
runs the built-in once for itself and all its refinements.

A failure (an expression error, an input over the bound) raises
:class:`RuleRunError` naming the rule's file; the runner turns it into an error
entry for this rule alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from gitmedic.bot.memory.cel import CelError, check_input
from gitmedic.bot.memory.rule import CompiledRule
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector, DetectorSpec, Scope

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class RuleRunError(RuntimeError):
    pass


def shared_findings(snapshot: Snapshot, detector: Detector) -> tuple[Finding, ...]:
    """``detector``'s findings on ``snapshot``, computed once per snapshot."""
    return snapshot.derived(
        f"gitmedic.findings:{detector.id}", lambda: tuple(detector.detect(snapshot))
    )


def sharing(detector: Detector) -> Detector:
    """``detector`` with its findings kept on the snapshot for the rules that refine it."""
    return Detector(detector.spec, lambda snapshot: shared_findings(snapshot, detector))


def rule_spec(compiled: CompiledRule, base: Detector | None) -> DetectorSpec:
    rule = compiled.rule
    return DetectorSpec(
        id=rule.id,
        description=rule.description,
        kinds=frozenset(rule.reads) | (base.spec.kinds if base else frozenset()),
        severity=rule.severity,
        remediation=rule.remediation or f"Follow the playbook {', '.join(rule.playbooks)}.",
        scope=base.spec.scope if base else Scope.BOTH,
        playbooks=rule.playbooks,
        fire_after=base.spec.fire_after if base else 2,
        clear_after=base.spec.clear_after if base else 2,
    )


def rule_detector(compiled: CompiledRule, base: Detector | None) -> Detector:
    spec = rule_spec(compiled, base)

    def detect(snapshot: Snapshot) -> list[Finding]:
        try:
            if base is None:
                return list(_on_objects(compiled, spec, snapshot))
            return list(_on_findings(compiled, spec, snapshot, base))
        except CelError as exc:
            raise RuleRunError(f"{compiled.source}: {exc}") from None

    return Detector(spec, detect)


def _on_objects(compiled: CompiledRule, spec: DetectorSpec, snap: Snapshot) -> Iterator[Finding]:
    uses = compiled.uses
    for kind in compiled.rule.reads:
        for obj in snap.of_kind(kind):
            variables = {
                "object": dict(obj.body) if "object" in uses else {},
                "podSpec": _pod_spec(snap, obj.ref) if "podSpec" in uses else {},
            }
            for params in _hits(compiled, variables):
                yield spec.finding(obj.ref, _message(compiled, obj.ref, params), params=params)


def _on_findings(
    compiled: CompiledRule, spec: DetectorSpec, snap: Snapshot, base: Detector
) -> Iterator[Finding]:
    uses = compiled.uses
    for found in shared_findings(snap, base):
        ref = found.resource
        obj = snap.get(ref.kind, ref.namespace, ref.name) if "object" in uses else None
        variables = {
            "object": dict(obj.body) if obj else {},
            "podSpec": _owner_pod_spec(snap, ref) if "podSpec" in uses else {},
            "finding": _finding_variable(found),
        }
        for hit in _hits(compiled, variables):
            params = {**found.params, **hit}
            yield spec.finding(
                ref,
                _message(compiled, ref, params),
                rule=found.rule,
                evidence=found.evidence,
                related=found.related,
                params=params,
                unmasked=found.unmasked,
            )


def _finding_variable(found: Finding) -> dict[str, Any]:
    """The finding as ``--format json`` has it, less ``related`` (one entry per pod: a
    large workload would pass the input bound) and the fingerprint (a digest, no fact)."""
    data = found.to_json()
    data.pop("related", None)
    data.pop("fingerprint", None)
    return data


def _hits(compiled: CompiledRule, variables: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for name in compiled.uses:
        check_input(variables.get(name))
    result = compiled.match.evaluate(variables)
    for hit in _as_hits(result):
        extra = {n: p.evaluate({**variables, "hit": hit}) for n, p in compiled.params.items()}
        yield {**hit, **extra}


def _as_hits(result: Any) -> list[dict[str, Any]]:
    if result is True:
        return [{}]
    if result is False or result is None:
        return []
    if isinstance(result, list):
        items = list(_flat(result))
        if all(isinstance(i, dict) for i in items):
            return [{str(k): v for k, v in i.items()} for i in items]
    raise CelError(f"match must give a bool or a list of maps, not {type(result).__name__}")


def _flat(items: list[Any]) -> Iterator[Any]:
    """Nested comprehensions give lists of lists: one hit per map, however deep."""
    for item in items:
        if isinstance(item, list):
            yield from _flat(item)
        else:
            yield item


def _owner_pod_spec(snap: Snapshot, ref: Resource) -> dict[str, Any]:
    """The pod template spec of a finding's resource (built-ins report top-level workloads)."""
    workload = snap.workload(ref)
    return dict(workload.pod_spec) if workload is not None else {}


def _pod_spec(snap: Snapshot, ref: Resource) -> dict[str, Any]:
    """The pod template spec of a top-level workload; {} for anything else (an owned
    ReplicaSet or Pod would repeat its owner's finding)."""
    workloads = snap.derived(
        "gitmedic.rules:workloads", lambda: {w.ref: w.pod_spec for w in snap.workloads()}
    )
    return dict(workloads.get(ref) or {})


def _message(compiled: CompiledRule, ref: Resource, params: Mapping[str, Any]) -> str:
    values = {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace, **params}

    def fill(m: re.Match[str]) -> str:
        value = values.get(m[1])
        return m[0] if value is None else str(value)

    return _PLACEHOLDER.sub(fill, compiled.rule.message)
