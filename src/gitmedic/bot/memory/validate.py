"""Validating candidate memory before it is proposed: the guard, plus two reflection checks.

A candidate (a CEL rule and a playbook, plus the index line) is written, with
its three cases, into a scratch copy of the repo's ``.gitmedic/``, and the
memory guard runs there; only problems the candidate *adds* count against it
(memory that was already broken is not this candidate's fault). Two more checks
that only reflection can make, because only it knows the incident:

- **generalisation**: the rule must also fire when the implicated object (and
  its containers) carry other names *and* the fields the fix changed hold other
  values: a rule that matches the incident's literal names or bad value would
  never see the same fault class again;
- **no leak**: no file of the change may contain a value known to be secret (a
  Secret's data, a credential-named env or ConfigMap value, anything the
  redaction patterns mask) from the snapshots.

Cases are stored redacted: Secret values, credential-named values and
credential-looking strings are masked, and the bulky, secret-prone
``last-applied-configuration`` annotation and ``managedFields`` are dropped.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.bot.memory.guard import MEMORY, check_memory
from gitmedic.bot.memory.learned import rule_findings
from gitmedic.bot.memory.rule import RuleError, load_rule
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.manifests.paths import Path as FieldPath
from gitmedic.reconciler.manifests.paths import lookup
from gitmedic.reconciler.redact import looks_secret_name, redact_object, redact_text

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
PROBE_NAME = "gitmedic-probe"


@dataclass(frozen=True)
class Snapshots:
    pre_fix: Snapshot
    post_fix: Snapshot
    healthy: Snapshot


def case_files(rule_id: str, snapshots: Snapshots) -> dict[str, str]:
    """The guard's cases for rule ``rule_id``, redacted: ``{path: JSON text}``."""
    root = f"{MEMORY}/rules/cases/{rule_id}"
    roles = {"pre-fix": snapshots.pre_fix, "post-fix": snapshots.post_fix}
    roles["healthy"] = snapshots.healthy
    return {f"{root}/{role}.json": case_json(snap) for role, snap in roles.items()}


def case_json(snapshot: Snapshot) -> str:
    objects = [_stored(o) for o in snapshot]
    return json.dumps({"mode": snapshot.mode.value, "objects": objects}, indent=1, sort_keys=True)


def _stored(obj: Obj) -> dict[str, Any]:
    body = redact_object(obj.body)
    meta = dict(body.get("metadata") or {})
    meta.pop("managedFields", None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    meta.setdefault("name", obj.name)
    if obj.namespace:
        meta.setdefault("namespace", obj.namespace)
    return {**body, "apiVersion": obj.ref.api_version, "kind": obj.kind, "metadata": meta}


def guard_problems(repo: Path, files: Mapping[str, str], app_names: frozenset[str]) -> list[str]:
    """Problems the guard finds with ``files`` applied that it did not find before."""
    with tempfile.TemporaryDirectory(prefix="gitmedic-memory-") as scratch:
        before = _scratch_copy(repo, Path(scratch) / "before")
        after = _scratch_copy(repo, Path(scratch) / "after")
        for rel, text in files.items():
            (after / rel).parent.mkdir(parents=True, exist_ok=True)
            (after / rel).write_text(text)
        old = {str(p) for p in check_memory(before, app_names=app_names)}
        return [str(p) for p in check_memory(after, app_names=app_names) if str(p) not in old]


def _scratch_copy(repo: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    if (repo / MEMORY).is_dir():
        shutil.copytree(repo / MEMORY, dest / MEMORY)
    return dest


def generalises(
    rule_text: str, pre_fix: Snapshot, implicated: Resource, changed: Sequence[FieldPath] = ()
) -> tuple[str, Finding | None]:
    """Run the rule with the implicated object (and its containers) renamed and the
    ``changed`` fields given other values: ("", its finding there) when it fires,
    else (why not, None)."""
    probe = Snapshot(
        (_renamed(o, changed) if o.ref == implicated else o for o in pre_fix), mode=pre_fix.mode
    )
    try:
        found = rule_findings(load_rule(rule_text, "candidate"), probe)
    except RuleError as exc:
        return f"fails on the renamed object: {exc}", None
    for finding in found:
        if finding.resource.name == PROBE_NAME:
            return "", finding
    return (
        f"does not fire when {implicated.kind} {implicated.name} and its containers are "
        "renamed and the fixed field holds another value: it matches the incident, not "
        "the fault"
    ), None


def first_finding(rule_text: str, snapshot: Snapshot) -> Finding | None:
    """The rule's first finding on ``snapshot``, None on none or error."""
    try:
        found = rule_findings(load_rule(rule_text, "candidate"), snapshot)
    except RuleError:
        return None
    return found[0] if found else None


def mutated(snapshot: Snapshot, ref: Resource, changed: Sequence[FieldPath]) -> Snapshot:
    """``snapshot`` with the ``changed`` fields of ``ref`` holding other values."""
    return Snapshot(
        (_with_other_values(o, changed) if o.ref == ref else o for o in snapshot),
        mode=snapshot.mode,
    )


def _with_other_values(obj: Obj, changed: Sequence[FieldPath]) -> Obj:
    body = json.loads(json.dumps(obj.body))
    for path in changed:
        _set_other(body, path)
    return Obj(obj.ref, body, obj.source)


def _set_other(body: Any, path: FieldPath) -> None:
    found, value = lookup(body, path)
    if not found or isinstance(value, bool) or value is None:
        return
    parent_found, parent = lookup(body, path[:-1])
    key = path[-1]
    if not parent_found or not isinstance(key, str) or not isinstance(parent, dict):
        return
    parent[key] = _other(value)


def _other(value: Any) -> Any:
    """A different value of the same shape (the same fault with another bad value)."""
    if isinstance(value, str):
        return value + "-probe"
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, list):
        return [*map(_other, value), *([] if value else ["probe"])]
    if isinstance(value, dict):
        return {k: _other(v) for k, v in value.items()}
    return value


def _renamed(obj: Obj, changed: Sequence[FieldPath] = ()) -> Obj:
    body = json.loads(json.dumps(_with_other_values(obj, changed).body))
    body.setdefault("metadata", {})["name"] = PROBE_NAME
    for index, container in enumerate(_containers(body)):
        container["name"] = f"probe-{index}"
    ref = Resource(obj.kind, obj.namespace, PROBE_NAME, obj.ref.api_version)
    return Obj(ref, body, obj.source)


def _containers(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from (c for c in value if isinstance(c, dict) and "name" in c)
            else:
                yield from _containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item)


def secret_values(snapshots: Snapshots) -> set[str]:
    """Every value in the snapshots that must never be written (at least 6 characters)."""
    found: set[str] = set()
    for snap in (snapshots.pre_fix, snapshots.post_fix, snapshots.healthy):
        for obj in snap:
            _collect(obj.body, found, secret=obj.kind == "Secret")
    return {v for v in found if len(v) >= 6}


def _collect(node: Any, found: set[str], *, secret: bool) -> None:
    if isinstance(node, dict):
        named = isinstance(node.get("name"), str) and looks_secret_name(node["name"])
        for key, value in node.items():
            hidden = secret and key in ("data", "stringData")
            if isinstance(value, str):
                if _secret_value(key, value, hidden=hidden, named=named):
                    found.add(value)
            else:
                _collect(value, found, secret=secret and not hidden)
                if hidden and isinstance(value, dict):
                    found.update(v for v in value.values() if isinstance(v, str))
    elif isinstance(node, list):
        for item in node:
            _collect(item, found, secret=secret)


def _secret_value(key: str, value: str, *, hidden: bool, named: bool) -> bool:
    named_value = named and key == "value"
    return hidden or named_value or looks_secret_name(str(key)) or redact_text(value) != value


def leaks(files: Mapping[str, str], secrets: set[str]) -> list[str]:
    """``path: leaks a secret value`` for each file containing one (never the value)."""
    return sorted(
        f"{rel}: contains a secret value from the snapshots"
        for rel, text in files.items()
        if any(s in text for s in secrets)
    )
