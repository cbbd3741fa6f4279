"""The memory guard's part for learned rules (``.gitmedic/rules/*.yaml``): replay, never trust.

Each rule must:

- parse, match the shipped schema and compile under the CEL cost bound;
- have an id no built-in or other rule has, refine only a built-in detector, and
  name only playbooks that exist;
- fire on its incident's pre-fix snapshot and stay silent on the post-fix and
  healthy ones (``.gitmedic/rules/cases/<id>/*.json``);
- not match on a credential's name (``DB_PASSWORD``): having one is configuration;
- stay silent on legitimate configurations: the bundled example shop and
  ``legitimate.yaml`` (credentials from Secrets, commands, probes, ...): a rule
  that fires there flags a configuration, not a fault;
- not duplicate another rule (the same base, kinds and match): merge them.

And no Python learned detector of an earlier version may remain under
``.gitmedic/detectors/``: it is refused, never read, with the migration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from gitmedic.bot.memory.learned import (
    MEMORY,
    legacy_detectors,
    read_rule,
    refuses_link,
    rule_files,
    rule_findings,
)
from gitmedic.bot.memory.rule import RULES_DIR, CompiledRule, RuleError
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.reconciler.redact import looks_secret_name

_LITERAL = re.compile(r""""((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'""")
CASE_ROLES = {"pre-fix": True, "post-fix": False, "healthy": False}  # role -> must fire
CASES_DIR = f"{MEMORY}/{RULES_DIR}/cases"


def rule_problems(repo: Path, known_playbooks: set[str]) -> Iterator[tuple[str, str]]:
    """``(path, message)`` for every problem of the repo's learned rules."""
    for entry in legacy_detectors(repo):
        legacy, _, message = entry.partition(": ")
        yield legacy, message
    from gitmedic.detectors.builtin import builtin_registry

    taken = {d.id: "a built-in detector" for d in builtin_registry()}
    loaded: list[CompiledRule] = []
    for path in rule_files(repo):
        rel = path.relative_to(repo).as_posix()
        try:
            compiled = read_rule(repo, path)
        except RuleError as exc:
            yield rel, str(exc).removeprefix(f"{rel}: ")
            continue
        rule = compiled.rule
        if rule.id in taken:
            yield rel, f"the id {rule.id} is already taken by {taken[rule.id]}"
            continue
        taken[rule.id] = rel
        missing = sorted(set(rule.playbooks) - known_playbooks)
        if missing:
            yield rel, f"names playbooks that do not exist: {', '.join(missing)}"
        credentials = credential_literals(rule.match)
        if credentials:
            yield (
                rel,
                (
                    f"matches on a credential's name ({', '.join(credentials)}): having a "
                    "credential is configuration, not a fault"
                ),
            )
        for other in loaded:
            if rule.same_logic(other.rule):
                yield rel, f"duplicates {other.source} (the same refines, reads and match): merge"
        loaded.append(compiled)
        yield from ((rel, m) for m in _replay(repo, compiled))


def credential_literals(expression: str) -> list[str]:
    """The string literals of ``expression`` named like credentials (DB_PASSWORD, api_key)."""
    literals = (a or b for a, b in _LITERAL.findall(expression))
    return sorted({text for text in literals if looks_secret_name(text)})


def _replay(repo: Path, compiled: CompiledRule) -> Iterator[str]:
    cases = repo / CASES_DIR / compiled.rule.id
    for role, must_fire in CASE_ROLES.items():
        case = cases / f"{role}.json"
        if not case.is_file() or refuses_link(repo, case):
            yield f"has no {role} case ({case.relative_to(repo).as_posix()})"
            continue
        try:
            fired = bool(rule_findings(compiled, load_case(case)))
        except (RuleError, ValueError, KeyError, TypeError) as exc:
            yield f"{role}: {exc}"
            return
        if fired != must_fire:
            yield f"{'does not fire' if must_fire else 'fires'} on its {role} snapshot"
    try:
        legit = rule_findings(compiled, legitimate())
    except RuleError as exc:
        yield f"fails on the legitimate configurations: {exc}"
        return
    if legit:
        where = ", ".join(sorted({f"{f.resource.kind} {f.resource.name}" for f in legit}))
        yield f"fires on a legitimate configuration ({where}): it flags configuration, not a fault"


def load_case(path: Path) -> Snapshot:
    """A stored snapshot: ``{"mode": "live|desired", "objects": [k8s objects]}``."""
    data = json.loads(path.read_text())
    return Snapshot(map(_obj, data["objects"]), mode=Mode(data.get("mode", "live")))


def _obj(body: dict[str, object]) -> Obj:
    meta = body.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ref = Resource(
        str(body["kind"]),
        str(meta.get("namespace", "")),
        str(meta["name"]),
        str(body["apiVersion"]),
    )
    return Obj(ref, body)


@cache
def legitimate() -> Snapshot:
    """The configurations no learned rule may flag: legitimate.yaml and the example shop."""
    texts = [(resources.files(__package__) / "legitimate.yaml").read_text()]
    shop = resources.files("gitmedic") / "examples" / "shop"
    texts += [
        f.read_text()
        for f in sorted(shop.iterdir(), key=lambda f: f.name)
        if f.name.endswith(".yaml")
    ]
    objects = []
    for text in texts:
        for body in yaml.safe_load_all(text):
            if isinstance(body, dict) and "kind" in body:
                body.setdefault("metadata", {}).setdefault("namespace", "legit")
                objects.append(_obj(body))
    return Snapshot(objects, mode=Mode.DESIRED)
