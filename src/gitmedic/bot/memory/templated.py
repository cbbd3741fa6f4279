"""Templated memory: a CEL rule and its playbook, rendered from a field rule (:mod:`.fixshape`).

The rule's match is the field rule's pattern as a CEL expression (:mod:`.field_rule`);
the playbook's fix recipe names the same field with the pattern's wildcards as
placeholders (``{pod_spec}.containers[name={container}].env[name={env}].value``),
which ``bind()`` fills from the finding's params, so the recipe applies to any
object the detector fires on. Values are written only when the rule says they
are safe (no object names, no credentials).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from gitmedic.bot.memory.field_rule import match_expression, reads
from gitmedic.bot.memory.fixshape import MISSING, WORKLOAD, Wild
from gitmedic.bot.memory.fixshape import Rule as FieldRule
from gitmedic.bot.memory.rule import Rule
from gitmedic.detectors.finding import Severity

_KEY = re.compile(r"[^.\[\]\"{}]+")


@dataclass(frozen=True)
class Context:
    """What the incident contributes to the prose (all of it already redacted)."""

    incident: str
    strategy: str
    commit: str
    diagnosis: str
    symptoms: tuple[str, ...]
    severity: str  # "WARNING" or "CRITICAL" (a Severity member name)


def slug(rule: FieldRule) -> str:
    keys = [s for s in rule.pattern if isinstance(s, str)]
    tail = keys[-2:] if keys and keys[-1] in ("value", "name", "key", "path") else keys[-1:]
    scope = "workload" if rule.scope == WORKLOAD else rule.scope
    words = [scope, *tail, {"absent": "missing"}.get(rule.predicate, "")]
    text = "-".join(_kebab(w) for w in words if w)
    return re.sub(r"-+", "-", text).strip("-")[:60].strip("-")


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"(?<!^)([A-Z])", r"-\1", text).lower())


def fix_path(rule: FieldRule) -> str:
    """The recipe's path: pattern segments with wildcards as placeholders."""
    parts = ["{pod_spec}"] if rule.scope == WORKLOAD else []
    for seg in rule.pattern:
        if isinstance(seg, Wild):
            parts.append(_wild_text(seg))
        elif _KEY.fullmatch(seg):
            parts.append(f".{seg}" if parts else seg)
        else:
            parts.append(f"[{json.dumps(seg)}]")
    return "".join(parts)


def _wild_text(seg: Wild) -> str:
    if not seg.field:
        return f"[{{{seg.bind}}}]"
    return f"[{seg.field}={{{seg.bind}}}]" if seg.bind else f"[{seg.field}={seg.value}]"


def render_rule(rule: FieldRule, detector_id: str, playbook_id: str, ctx: Context) -> Rule:
    """The field rule as a CEL rule (Inexpressible when it has no CEL form)."""
    return Rule(
        id=detector_id,
        description=f"{_subject(rule)}: {fix_path(rule)} {_rule_text(rule)}.",
        severity=Severity[ctx.severity],
        reads=reads(rule),
        match=match_expression(rule),
        message="{kind} {name}: {field_path} " + _rule_text(rule),
        playbooks=(playbook_id,),
        remediation=f"Follow the {playbook_id} playbook: restore the field from Git.",
    )


def render_playbook(rule: FieldRule, detector_id: str, playbook_id: str, ctx: Context) -> str:
    path = fix_path(rule)
    fix: dict[str, Any] = {"object": "resource", "paths": [path]}
    fallback = _fallback(rule, path)
    if fallback:
        fix["fallback"] = fallback
    front = {
        "id": playbook_id,
        "fault_class": playbook_id,
        "title": f"{_subject(rule)}: {path} {_rule_text(rule)}",
        "detectors": [detector_id],
        "risk": "low",
        "fix": fix,
    }
    values = {
        "front_matter": yaml.safe_dump(front, sort_keys=False, width=1000).strip(),
        "title": front["title"],
        "incident": ctx.incident,
        "strategy": ctx.strategy,
        "commit": ctx.commit[:12] or "unknown",
        "field_text": _field_text(rule),
        "detector_id": detector_id,
        "rule_text": _rule_text(rule),
        "symptoms": "\n".join(f"- {s}" for s in ctx.symptoms) or "- (no finding named one)",
        "localize": _localize(rule),
        "paths": f"- `{path}`",
        "fallback_text": _fallback_text(fallback),
        "diagnosis": ctx.diagnosis or "(none recorded)",
    }
    return _template("playbook.md.tmpl").substitute(values)


def _fallback(rule: FieldRule, path: str) -> dict[str, Any]:
    if rule.good is MISSING or rule.predicate == "present":
        return {}
    return {path: rule.good}


def _fallback_text(fallback: Mapping[str, Any]) -> str:
    if not fallback:
        return "\nWithout a good value in history, escalate: there is no safe default.\n"
    shown = ", ".join(f"`{k}` = `{json.dumps(v)}`" for k, v in fallback.items())
    return f"\nWithout a good value in history: {shown}.\n"


def _subject(rule: FieldRule) -> str:
    return "A workload" if rule.scope == WORKLOAD else f"A {rule.scope}"


def _rule_text(rule: FieldRule) -> str:
    if rule.predicate == "equals":
        return f"is {json.dumps(rule.bad)}"
    return "is set" if rule.predicate == "present" else "is not set"


def _field_text(rule: FieldRule) -> str:
    binds = ", ".join(f"`{{{p}}}`" for p in rule.params)
    where = f" The placeholders {binds} are bound from the finding." if binds else ""
    return f"The fault lives in `{fix_path(rule)}`.{where}"


def _localize(rule: FieldRule) -> str:
    if rule.scope == WORKLOAD:
        return (
            "The pod template of {name} (any workload kind), at the field the finding's "
            "`field_path` names."
        )
    return f"The {rule.scope} {{name}}, at the field the finding's `field_path` names."


def _template(name: str) -> string.Template:
    text = (resources.files("gitmedic.bot") / "templates" / "memory" / name).read_text()
    return string.Template(text)


def symptoms(summaries: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for s in summaries if s))[:8]
