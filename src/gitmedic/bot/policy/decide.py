"""The auto-merge policy: how risky a proposed change is, and whether a human must merge it.

Input: a :class:`ChangeSummary` (what the change does), the ``policy`` section of
``.gitmedic/config.yaml`` and the current time; output: a :class:`Decision`
whose reason is printed in the PR body. Pure: no I/O, time injected.

How the risk is found, in this order:

1. **Rules** (Renovate-like, see :mod:`gitmedic.bot.policy.match`): a rule matches
   when every matcher it gives matches. Of the matching rules the *most specific*
   wins (the one giving the most matchers); among equally specific ones the *last*
   in the file wins, so a later, narrower exception overrides an earlier default.
   No matching rule: the risk is ``medium`` (a human merges).
2. **Safe defaults**, a floor no rule can lower:

   - RBAC kinds, Secrets, CRDs, Namespaces and admission webhooks: ``high``;
   - deleting an object: ``high``;
   - setting an image never deployed before: at least ``medium``;
   - one value chosen among several that fit (a fault with no history, whose
     evidence does not determine the value): at least ``medium``;
   - an LLM-authored edit to a field outside :data:`LLM_FIELD_ALLOWLIST` (or a
     removal outside :data:`LLM_REMOVAL_ALLOWLIST`): at least ``medium``.

3. **Auto-merge**: ``policy.auto_merge`` names the highest risk merged without a
   human (``low``, ``medium`` or ``never``). A change that hit a safe default is
   never merged without a human, whatever ``auto_merge`` says: the floor exists
   because a person must look.

The LLM allowlist holds the fields that the fault catalogue's fixes restore and
whose blast radius stays inside one workload: a Service's ``targetPort`` and
selector, replicas, an env var's value, a probe's port or path, container
resources, and (removal only) a nodeSelector. Globs are matched against field
paths inside the edited object, e.g. ``spec.template.spec.containers[0].env[2].value``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime

from gitmedic.bot.policy.match import (
    PolicyError,
    covers,
    covers_glob,
    field_matches,
    in_window,
    specificity,
)
from gitmedic.reconciler.config import PolicyConfig, PolicyRule

__all__ = [
    "LLM_FIELD_ALLOWLIST",
    "LLM_REMOVAL_ALLOWLIST",
    "SENSITIVE_KINDS",
    "ChangeSummary",
    "Decision",
    "PolicyError",
    "Risk",
    "decide",
]


class Risk(enum.IntEnum):
    LOW = 0
    MEDIUM = 1
    HIGH = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Risk:
        try:
            return cls[text.upper()]
        except KeyError:
            raise PolicyError(f"unknown risk {text!r} (low, medium or high)") from None


SENSITIVE_KINDS = frozenset(
    {
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",  # RBAC
        "Secret",
        "CustomResourceDefinition",
        "Namespace",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    }
)

_CONTAINERS = ("**.containers[*]", "**.initContainers[*]")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
LLM_FIELD_ALLOWLIST: tuple[str, ...] = (
    "spec.ports[*].targetPort",
    "spec.selector",
    "spec.selector.*",
    "spec.selector.matchLabels.*",
    "spec.replicas",
    *(f"{c}.env[*].value" for c in _CONTAINERS),
    *(f"{c}.{p}.*.port" for c in _CONTAINERS for p in _PROBES),
    *(f"{c}.{p}.httpGet.path" for c in _CONTAINERS for p in _PROBES),
    *(f"{c}.resources.**" for c in _CONTAINERS),
    *(f"{c}.resources" for c in _CONTAINERS),
)
LLM_REMOVAL_ALLOWLIST: tuple[str, ...] = ("**.nodeSelector", "**.nodeSelector.*")


@dataclass(frozen=True)
class ChangeSummary:
    """What a proposed change does, as the policy sees it."""

    strategy: str  # playbook | bisect | llm | revert
    detectors: tuple[str, ...] = ()
    playbooks: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()  # edited (set) field paths inside their objects
    removed_fields: tuple[str, ...] = ()  # field paths the change removes
    files: tuple[str, ...] = ()
    changed_lines: int = 0
    namespaces: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    deletes_object: bool = False
    new_image: bool = False  # sets an image never deployed before
    llm_authored: bool = False
    alternatives: int = 0  # other values the evidence allows (a fault with no history)


@dataclass(frozen=True)
class Decision:
    risk: str  # low | medium | high
    auto_merge: bool
    reason: str
    matched_rule: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "risk": self.risk,
            "auto_merge": self.auto_merge,
            "reason": self.reason,
            "matched_rule": self.matched_rule,
        }


def decide(change: ChangeSummary, config: PolicyConfig, now: datetime) -> Decision:
    """The risk of ``change`` and whether it may merge without a human (module doc)."""
    if now.tzinfo is None:
        raise PolicyError("the policy needs an aware datetime (UTC windows)")
    utc = now.astimezone(UTC)
    winner = _winning_rule(change, config.rules, utc)
    if winner is None:
        risk, why, name = Risk.MEDIUM, "no policy rule matched (default: medium)", None
    else:
        index, rule = winner
        name = rule_name(rule, index)
        risk, why = Risk.parse(rule.risk), f"rule {name!r} matched"
    floors = safe_default_floors(change)
    floor = max((level for level, _ in floors), default=Risk.LOW)
    if floor > risk:
        risk = floor
    auto = not floors and _allowed(risk, config.auto_merge)
    reasons = [f"{why} -> {Risk.parse(rule.risk).label}" if winner else why]
    reasons += [f"safe default: {text} -> at least {level.label}" for level, text in floors]
    reasons.append(_merge_reason(risk, auto, bool(floors), config.auto_merge))
    return Decision(risk.label, auto, "; ".join(reasons), name)


def rule_name(rule: PolicyRule, index: int) -> str:
    return rule.description or f"policy.rules[{index}]"


def rule_matches(rule: PolicyRule, change: ChangeSummary, now: datetime) -> bool:
    """Whether every matcher ``rule`` gives matches ``change`` at UTC time ``now``."""
    checks = (
        not rule.strategies or change.strategy in rule.strategies,
        not rule.detectors or covers(change.detectors, rule.detectors),
        not rule.playbooks or covers(change.playbooks, rule.playbooks),
        not rule.fields or covers_glob((*change.fields, *change.removed_fields), rule.fields, "."),
        not rule.paths or covers_glob(change.files, rule.paths, "/"),
        not rule.namespaces or covers(change.namespaces, rule.namespaces),
        rule.max_changed_lines is None or change.changed_lines <= rule.max_changed_lines,
        not rule.windows or any(in_window(w, now) for w in rule.windows),
    )
    return all(checks)


def safe_default_floors(change: ChangeSummary) -> list[tuple[Risk, str]]:
    """The safe defaults ``change`` hits, each with the lowest risk it allows."""
    floors: list[tuple[Risk, str]] = []
    sensitive = sorted(set(change.kinds) & SENSITIVE_KINDS)
    if sensitive:
        floors.append((Risk.HIGH, f"touches {', '.join(sensitive)}"))
    if change.deletes_object:
        floors.append((Risk.HIGH, "deletes an object"))
    if change.new_image:
        floors.append((Risk.MEDIUM, "sets an image never deployed before"))
    if change.alternatives:
        floors.append(
            (Risk.MEDIUM, f"one of {change.alternatives + 1} values that fit: a person chooses")
        )
    outside = llm_fields_outside_allowlist(change) if change.llm_authored else []
    if outside:
        # Every field, not the first: a privileged: true beside an image change is named too.
        fields = ", ".join(outside)
        floors.append((Risk.MEDIUM, f"LLM-authored edit outside the allowlist: {fields}"))
    return floors


def llm_fields_outside_allowlist(change: ChangeSummary) -> list[str]:
    sets = [f for f in change.fields if not field_matches(LLM_FIELD_ALLOWLIST, f)]
    removals = [f for f in change.removed_fields if not field_matches(LLM_REMOVAL_ALLOWLIST, f)]
    return sorted(sets + removals)


def _winning_rule(
    change: ChangeSummary, rules: tuple[PolicyRule, ...], now: datetime
) -> tuple[int, PolicyRule] | None:
    best: tuple[int, PolicyRule] | None = None
    for index, rule in enumerate(rules):
        if rule_matches(rule, change, now) and (
            best is None or specificity(rule) >= specificity(best[1])
        ):
            best = (index, rule)  # ">=": the later of equally specific rules wins
    return best


def _allowed(risk: Risk, auto_merge: str) -> bool:
    if auto_merge == "never":
        return False
    return risk <= Risk.parse(auto_merge)


def _merge_reason(risk: Risk, auto: bool, floored: bool, auto_merge: str) -> str:
    if auto:
        return f"{risk.label} risk is within auto_merge: {auto_merge} -> merge when the gate passes"
    if floored:
        return "a safe default applies -> hold for a human"
    if auto_merge == "never":
        return "auto_merge: never -> hold for a human"
    return f"{risk.label} risk is above auto_merge: {auto_merge} -> hold for a human"
