"""Learned detection rules: data in ``.gitmedic/rules/<id>.yaml``, validated and compiled.

A rule is a detector written as data (``rule_schema.json``, shipped with the
package and checked by ``gitmedic memory check``)::

    id: learned-pod-image-pull-with-command
    description: pod-image-pull on a container that also sets command
    severity: critical
    reads: [Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod]
    refines: pod-image-pull            # optional: a built-in detector
    match: >-                           # CEL: true, or a list of maps (one finding each)
      podSpec[finding.params.container_field].exists(c,
        c.name == finding.params.container && has(c.command))
    message: "{kind} {name}: container {container} cannot pull its image and sets command"
    playbooks: [pod-image-pull-with-command]
    params: {}                          # optional: name -> CEL, with `hit` the match's map

Without ``refines`` the match runs once per object of the kinds in ``reads``
(``object``, and ``podSpec`` for workloads); with it, once per finding of the
built-in detector (``finding``, and ``object``/``podSpec`` of the finding's
resource), so a lesson narrows a symptom the built-in already proves.

Parsing never runs anything: the text is YAML (strict, one document), checked
against the schema, and each expression is compiled under the cost bound of
:mod:`.cel`; every problem is a :class:`RuleError` naming the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from gitmedic.bot.memory.cel import CelError, Program
from gitmedic.detectors.finding import Severity
from gitmedic.reconciler.manifests.parse import load_strict_yaml

RULES_DIR = "rules"  # under .gitmedic/
MAX_RULE_BYTES = 16_384
OBJECT_VARS = ("object", "podSpec")
REFINE_VARS = (*OBJECT_VARS, "finding")


class RuleError(ValueError):
    """A rule file that may not be loaded; the message starts with the file."""


@dataclass(frozen=True)
class Rule:
    id: str
    description: str
    severity: Severity
    reads: tuple[str, ...]
    match: str
    message: str
    playbooks: tuple[str, ...]
    refines: str = ""
    params: Mapping[str, str] = field(default_factory=dict)
    remediation: str = ""

    @property
    def variables(self) -> tuple[str, ...]:
        return REFINE_VARS if self.refines else OBJECT_VARS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "description": self.description,
            "severity": self.severity.value,
            "reads": list(self.reads),
        }
        if self.refines:
            out["refines"] = self.refines
        out |= {"match": self.match, "message": self.message, "playbooks": list(self.playbooks)}
        if self.params:
            out["params"] = dict(self.params)
        if self.remediation:
            out["remediation"] = self.remediation
        return out

    def same_logic(self, other: Rule) -> bool:
        """Whether both detect the same thing (merge, do not add): refines, reads and match."""
        return (self.refines, sorted(self.reads), _squeezed(self.match)) == (
            other.refines,
            sorted(other.reads),
            _squeezed(other.match),
        )


@dataclass(frozen=True)
class CompiledRule:
    rule: Rule
    match: Program
    params: Mapping[str, Program]
    source: str  # the file, repo-relative

    @property
    def uses(self) -> frozenset[str]:
        """The variables any of its expressions reads."""
        return self.match.uses.union(*(p.uses for p in self.params.values()))


def _squeezed(expression: str) -> str:
    return "".join(expression.split())


def render_rule(rule: Rule) -> str:
    """The rule's file text (YAML, stable key order)."""
    return yaml.safe_dump(rule.to_json(), sort_keys=False, width=100, allow_unicode=True)


def parse_rule(text: str, source: str) -> Rule:
    if len(text.encode()) > MAX_RULE_BYTES:
        raise RuleError(f"{source}: {len(text.encode())} bytes (limit {MAX_RULE_BYTES})")
    try:
        data = load_strict_yaml(text, source)
    except ValueError as exc:
        raise RuleError(str(exc)) from None
    problems = schema_problems(data)
    if problems:
        raise RuleError(f"{source}: " + "; ".join(problems))
    return Rule(
        id=data["id"],
        description=data["description"],
        severity=Severity(data["severity"]),
        reads=tuple(data["reads"]),
        match=data["match"],
        message=data["message"],
        playbooks=tuple(data["playbooks"]),
        refines=data.get("refines", ""),
        params=dict(data.get("params") or {}),
        remediation=data.get("remediation", ""),
    )


def schema_problems(data: Any) -> list[str]:
    import jsonschema

    schema = json.loads((resources.files(__package__) / "rule_schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return sorted(
        f"{'.'.join(str(p) for p in e.absolute_path) or 'the rule'}: {e.message}"
        for e in validator.iter_errors(data)
    )


def compile_rule(rule: Rule, source: str) -> CompiledRule:
    """The rule with its expressions compiled (RuleError naming the file and field)."""
    try:
        match = Program(rule.match, rule.variables)
    except CelError as exc:
        raise RuleError(f"{source}: match: {exc}") from None
    params = {}
    for name, expression in rule.params.items():
        try:
            params[name] = Program(expression, (*rule.variables, "hit"))
        except CelError as exc:
            raise RuleError(f"{source}: params.{name}: {exc}") from None
    return CompiledRule(rule, match, params, source)


def load_rule(text: str, source: str) -> CompiledRule:
    return compile_rule(parse_rule(text, source), source)
