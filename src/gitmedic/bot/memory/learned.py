"""Learned detection rules from a manifest repo (``.gitmedic/rules/*.yaml``), as Detectors.

Memory is data: each rule is parsed, checked against the schema and compiled
under the CEL cost bound (:mod:`.rule`, :mod:`.cel`), and becomes a runner
Detector (:mod:`.rule_detector`). Nothing from the repo is imported or executed.

A rule that does not load (bad YAML, schema, an expression that does not compile
or is over the cost bound, an id already taken, a ``refines`` that names no
built-in detector, a symlink) is refused with the file and the reason; the others
load. Learned detectors of earlier gitmedic versions (``.gitmedic/detectors/*.py``)
are refused the same way, never read: :data:`MIGRATION` says what to do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.memory.rule import RULES_DIR, CompiledRule, RuleError, load_rule
from gitmedic.bot.memory.rule_detector import rule_detector, sharing
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector

MEMORY = ".gitmedic"
LEGACY_DIR = "detectors"
MIGRATION = (
    "Python learned detectors are no longer run (no code from the repository is ever "
    "executed): delete it and write the rule as data in .gitmedic/rules/<id>.yaml "
    "(CEL; see `gitmedic memory check`), or let gitmedic learn it again"
)


@dataclass(frozen=True)
class LearnedRules:
    detectors: tuple[Detector, ...]  # the learned rules, in file order
    registry: tuple[Detector, ...]  # built-ins (sharing findings with their refinements) + rules
    refused: tuple[str, ...]  # "path: reason", one per file that did not load


def legacy_detectors(repo: Path) -> list[str]:
    """``path: reason`` for each Python learned detector of an earlier version (never read)."""
    root = repo / MEMORY / LEGACY_DIR
    if not root.is_dir() or root.is_symlink():
        return []
    return [f"{p.relative_to(repo).as_posix()}: {MIGRATION}" for p in sorted(root.rglob("*.py"))]


def rule_files(repo: Path) -> list[Path]:
    root = repo / MEMORY / RULES_DIR
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml"))


def read_rule(repo: Path, path: Path) -> CompiledRule:
    """Parse and compile one rule file (RuleError naming it)."""
    rel = path.relative_to(repo).as_posix()
    if refuses_link(repo, path):
        raise RuleError(f"{rel}: is a symbolic link (or under one); memory files must be files")
    return load_rule(path.read_text(encoding="utf-8", errors="replace"), rel)


def refuses_link(repo: Path, path: Path) -> bool:
    """Whether ``path`` or a folder between it and ``repo`` is a symlink (never followed)."""
    current = path
    while current != repo and current != current.parent:
        if current.is_symlink():
            return True
        current = current.parent
    return False


def load_learned(repo: Path, builtin: Iterable[Detector]) -> LearnedRules:
    """The learned rules of ``repo`` next to ``builtin`` (the registry the loop runs)."""
    builtin = list(builtin)
    used = {d.id for d in builtin}
    by_id = {d.id: d for d in builtin}
    refused = legacy_detectors(repo)
    rules: list[Detector] = []
    bases: set[str] = set()
    for path in rule_files(repo):
        try:
            compiled = read_rule(repo, path)
            rules.append(_detector(compiled, by_id, used))
        except RuleError as exc:
            refused.append(str(exc))
            continue
        used.add(compiled.rule.id)
        bases.add(compiled.rule.refines)
    # A refined built-in keeps its findings on the snapshot: computed once for all.
    registry = [sharing(d) if d.id in bases else d for d in builtin]
    return LearnedRules(tuple(rules), (*registry, *rules), tuple(sorted(refused)))


def _detector(
    compiled: CompiledRule, builtin: dict[str, Detector], used: Iterable[str]
) -> Detector:
    rule = compiled.rule
    if rule.id in used:
        raise RuleError(f"{compiled.source}: detector id {rule.id!r} is already taken")
    base = None
    if rule.refines:
        base = builtin.get(rule.refines)
        if base is None:
            raise RuleError(
                f"{compiled.source}: refines {rule.refines!r}, which is not a built-in detector"
            )
    return rule_detector(compiled, base)


def detector_for(compiled: CompiledRule) -> Detector:
    """The rule as a detector next to the built-ins (RuleError when it refines none)."""
    from gitmedic.detectors.builtin import builtin_registry

    return _detector(compiled, {d.id: d for d in builtin_registry()}, ())


def rule_findings(compiled: CompiledRule, snapshot: Snapshot) -> list[Finding]:
    """What the rule finds on ``snapshot`` (RuleError naming the file when it fails)."""
    evaluation = run_detectors([detector_for(compiled)], snapshot)
    if evaluation.errors:
        raise RuleError("; ".join(e.message for e in evaluation.errors))
    return list(evaluation.findings)
