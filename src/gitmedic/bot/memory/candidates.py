"""Candidate memory for reflection: CEL rules and their playbooks, most specific first.

0. after undone attempts, the lesson (:mod:`.lesson`): a built-in symptom refined
   by the fields the first candidate missed, validated on the live snapshots;
1. templated field rules (:mod:`.fixshape`, :mod:`.field_rule`): the fields the
   fix changed, generalised over names and values.

Every candidate is data (a :class:`~.rule.Rule` and a Markdown playbook); which one
is written is decided by validation in :mod:`.reflection`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.memory import lesson
from gitmedic.bot.memory.field_rule import Inexpressible
from gitmedic.bot.memory.fixshape import leaf_changes, rules_for
from gitmedic.bot.memory.learned import MEMORY, rule_files
from gitmedic.bot.memory.rule import Rule
from gitmedic.bot.memory.templated import Context, render_playbook, render_rule, slug, symptoms
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.paths import Path as FieldPath
from gitmedic.reconciler.redact import redact_text

MAX_CANDIDATES = 8


@dataclass(frozen=True)
class Candidate:
    origin: str  # "template: <rule>" or "lesson: <slug>"
    rule: Rule
    playbook_text: str
    implicated: Resource | None  # the object the fix changed (generalisation probe)
    changed: tuple[FieldPath, ...]  # the fields the fix changed there (given other values)
    snapshots: Snapshots | None = None  # its cases, when not the desired states


@dataclass(frozen=True)
class Incident:
    """What the candidates are drawn from (a view of the reflection input)."""

    id: str
    strategy: str
    findings: tuple[Finding, ...]
    edits: tuple[Edit, ...]
    diagnosis: str
    commit: str
    snapshots: Snapshots
    undone: tuple[Edit, ...] = ()
    caused: tuple[Finding, ...] = ()
    live: Snapshots | None = None


def lesson_candidates(repo: Path, inc: Incident, notes: list[str]) -> Iterator[Candidate]:
    found = lesson.lesson_of(inc.findings, inc.edits, inc.undone, inc.caused)
    if isinstance(found, str) or inc.live is None:
        notes.append(found if isinstance(found, str) else "lesson: no live snapshots")
        return
    playbook_id = fresh(repo, lesson.playbook_slug(found))
    rule_id = f"learned-{playbook_id}"
    ctx = context(inc)
    paths = tuple(e.path for e in inc.edits if e.resource == found.symptom.resource)
    yield Candidate(
        f"lesson {playbook_id}",
        lesson.render_rule(found, rule_id, playbook_id, ctx),
        lesson.render_playbook(found, rule_id, playbook_id, ctx),
        found.symptom.resource,
        paths,
        inc.live,
    )


def templated_candidates(
    repo: Path, inc: Incident, names: frozenset[str], notes: list[str]
) -> Iterator[Candidate]:
    changes = leaf_changes(inc.edits, inc.snapshots.pre_fix)
    if not changes:
        notes.append("template: the fix changes no field of an object in the pre-fix snapshot")
        return
    ctx = context(inc)
    rules = [r for c in changes for r in rules_for(c, names)][:MAX_CANDIDATES]
    if not rules:
        notes.append("template: every changed field holds a value a rule may not match")
    for rule in rules:
        playbook_id = fresh(repo, slug(rule))
        rule_id = f"learned-{playbook_id}"
        try:
            cel_rule = render_rule(rule, rule_id, playbook_id, ctx)
        except Inexpressible as exc:
            notes.append(f"template {rule.predicate} on {slug(rule)}: {exc}")
            continue
        yield Candidate(
            f"template {rule.predicate} on {slug(rule)}",
            cel_rule,
            render_playbook(rule, rule_id, playbook_id, ctx),
            rule.change.resource,
            tuple(c.path for c in changes if c.resource == rule.change.resource),
        )


def context(inc: Incident) -> Context:
    worst = max((f.severity for f in inc.findings), key=lambda s: s.rank, default=Severity.WARNING)
    diagnosis = redact_text(inc.diagnosis)
    for ref in {e.resource for e in inc.edits}:
        diagnosis = re.sub(rf"\b{re.escape(ref.name)}\b", "{name}", diagnosis)
    return Context(
        incident=inc.id,
        strategy=inc.strategy,
        commit=inc.commit,
        diagnosis=diagnosis,
        symptoms=symptoms([f"`{f.detector}`: {redact_text(f.summary)}" for f in inc.findings]),
        severity=worst.name,
    )


def fresh(repo: Path, base: str) -> str:
    """``base``, or ``base-2``, ...: the first id no playbook or rule of the repo has."""
    taken = {p.name for p in (repo / MEMORY / "playbooks").glob("*")}
    taken |= {p.stem.removeprefix("learned-") for p in rule_files(repo)}
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate
