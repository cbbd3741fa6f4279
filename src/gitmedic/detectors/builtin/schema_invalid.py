"""Objects the API server would reject: not valid against the Kubernetes schema.

``replicas: "three"``, a misspelt field (strict: unknown fields are errors), a
port given as text: a sync carrying such an object fails, and the app keeps
running its previous revision while the repo says otherwise. The verdicts come
from the snapshot's schema check (see :mod:`gitmedic.detectors.schema`); a kind
with no schema (a custom resource whose CRD the bundle does not hold) is
reported once per apiVersion and kind as info, so it is visible that those
objects were not validated.
"""

from __future__ import annotations

from collections.abc import Iterator

from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.schema import SchemaCheck, SchemaVerdict
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.detectors.spec import DetectorSpec, Scope

SPEC = DetectorSpec(
    id="schema-invalid",
    description="An object does not validate against the Kubernetes OpenAPI schema.",
    kinds=frozenset(),  # every kind
    severity=Severity.CRITICAL,
    remediation="Correct the field the message names (its type, spelling or place).",
    scope=Scope.DESIRED,
    certain_because=("the API server rejects an object its schema refuses"),
)


def detect(snapshot: Snapshot) -> Iterator[Finding]:
    check = snapshot.schema
    if check is None:
        return
    unknown: set[tuple[str, str]] = set()
    for obj, verdict in _verdicts(snapshot, check):
        if not verdict.known:
            key = (obj.ref.api_version, obj.kind)
            if key not in unknown:
                unknown.add(key)
                yield _no_schema(obj, verdict)
        elif verdict.problems:
            yield _invalid(obj, verdict)


def _verdicts(snapshot: Snapshot, check: SchemaCheck) -> list[tuple[Obj, SchemaVerdict]]:
    """Every object's verdict, computed once per snapshot."""
    return snapshot.derived(
        "schema-invalid:verdicts", lambda: [(o, check.check(o.body)) for o in snapshot]
    )


def _invalid(obj: Obj, verdict: SchemaVerdict) -> Finding:
    first = verdict.problems[0]
    more = f" (+{len(verdict.problems) - 1} more)" if len(verdict.problems) > 1 else ""
    return SPEC.finding(
        obj.ref,
        f"{obj.kind} {obj.name} does not validate against Kubernetes {verdict.version}: "
        f"{first.path or '(object)'}: {first.message}{more}",
        evidence="; ".join(f"{p.path or '(object)'}: {p.message}" for p in verdict.problems),
        params={"path": first.path, "version": verdict.version},
    )


def _no_schema(obj: Obj, verdict: SchemaVerdict) -> Finding:
    return SPEC.finding(
        obj.ref,
        f"no schema for {obj.ref.api_version} {obj.kind} in Kubernetes {verdict.version}: "
        "objects of this kind are not validated",
        rule="schema-unknown-kind",
        severity=Severity.INFO,
        params={"apiVersion": obj.ref.api_version, "kind": obj.kind, "version": verdict.version},
    )
