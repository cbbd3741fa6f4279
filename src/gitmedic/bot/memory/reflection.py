"""Reflection: after a committed fix no playbook covered, write memory so the next one is free.

Input: the incident's findings, the fix (strategy, edits, diagnosis, the commit
that introduced the fault), the pre-fix, post-fix and healthy snapshots, and the
outcome record. Output: a :class:`MemoryChange`, files under ``.gitmedic/`` only
(plus a branch name, PR title and body) that the caller turns into a memory PR.

Memory is a learned rule (CEL, ``.gitmedic/rules/<id>.yaml``) and its playbook,
drawn from templates (:mod:`.candidates`): after undone attempts or a model's
fix the lesson of :mod:`.lesson` (a refinement of the runtime finding), else a
generalised field rule; or nothing but the outcome, with
the reasons every candidate was refused. No model writes memory: every rule is
derived from the verified fix, so it costs no tokens and its shape is known.

A candidate passes when the memory guard accepts it with its cases (fires on the
pre-fix snapshot, silent on the post-fix, healthy and legitimate ones, the
playbook parses, has no literal names, is indexed), it still fires with the
implicated object renamed and the fixed fields holding other values, its playbook
routes and binds the finding, and no file leaks a secret. A candidate with the
same logic as a rule the repo already has is merged into it (the rule's severity
rises to the worse of the two), never added beside it. The outcome record is
appended in every case (once per incident), and for a committed fix the
architecture summary (:mod:`.architecture`) is written beside it when the repo
has none or the fix's commit changed the topology.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from gitmedic.bot.memory import validate
from gitmedic.bot.memory.architecture import ARCHITECTURE_PATH, refreshed_architecture
from gitmedic.bot.memory.candidates import (
    Candidate,
    Incident,
    lesson_candidates,
    templated_candidates,
)
from gitmedic.bot.memory.learned import MEMORY, read_rule, rule_files
from gitmedic.bot.memory.outcomes import OutcomeRecord, outcome_change
from gitmedic.bot.memory.rule import RULES_DIR, Rule, RuleError, render_rule
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.bot.responder.playbooks import Playbook, PlaybookError, bind, parse_playbook
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler import repofs
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.redact import redact_text

INDEX_PATH = f"{MEMORY}/playbooks/README.md"


@dataclass(frozen=True)
class ReflectionInput:
    incident: str
    app: str
    findings: tuple[Finding, ...]
    strategy: str  # playbook | bisect | llm
    edits: tuple[Edit, ...]
    diagnosis: str
    introducing_commit: str  # "" when unknown
    snapshots: Snapshots
    outcome: OutcomeRecord
    # Edits of the candidates deployed and undone before this fix, and what they caused.
    undone: tuple[Edit, ...] = ()
    caused: tuple[Finding, ...] = ()
    live: Snapshots | None = None  # the symptom live before the fix, and after it

    def view(self) -> Incident:
        return Incident(
            self.incident,
            self.strategy,
            self.findings,
            self.edits,
            self.diagnosis,
            self.introducing_commit,
            self.snapshots,
            self.undone,
            self.caused,
            self.live,
        )


@dataclass(frozen=True)
class MemoryChange:
    branch: str
    title: str
    body: str
    files: Mapping[str, str]  # repo-relative path -> full new content, all under .gitmedic/
    rule: str  # the learned (or merged) rule's path, "" when none was written
    playbook: str  # the learned playbook's id, "" when none was written
    notes: tuple[str, ...]  # why memory was (not) written, one line per refused candidate
    merged: bool = False  # the rule was merged into one the repo already had


def reflect(repo: Path, inp: ReflectionInput) -> MemoryChange:
    notes: list[str] = []
    written: tuple[Candidate, dict[str, str]] | None = None
    merged = False
    skip = _skip_reason(inp)
    if skip:
        notes.append(skip)
    else:
        inc, names = inp.view(), app_names(inp.snapshots)
        for candidates in (
            # a model's fix with no lesson in it is the templates' case, not worth a note
            lesson_candidates(repo, inc, notes if inp.undone else []) if _lesson(inp) else iter(()),
            templated_candidates(repo, inc, names, notes),
        ):
            written, merged = _first_valid(repo, inp, candidates, notes)
            if written is not None:
                break
        if written is None:
            notes.append("no rule written: no candidate passed validation")
    return _change(repo, inp, written, merged, notes)


def _lesson(inp: ReflectionInput) -> bool:
    """Is there a lesson to refine the runtime finding with: undone candidates before the
    fix, or a model's fix (what no playbook knew, applied next time with no model)?"""
    return bool(inp.undone) or inp.strategy == "llm"


def _skip_reason(inp: ReflectionInput) -> str:
    if inp.outcome.status != "committed":
        return f"no memory: the transaction ended {inp.outcome.status}, not committed"
    if inp.outcome.playbooks_applied and not inp.undone:
        covered = ", ".join(inp.outcome.playbooks_applied)
        return f"no memory: the playbook {covered} already covers this fault"
    return ""


def app_names(snapshots: Snapshots) -> frozenset[str]:
    """Object and container names of the app: what memory must never spell out."""
    names: set[str] = set()
    for snap in (snapshots.pre_fix, snapshots.post_fix, snapshots.healthy):
        for obj in snap:
            names.add(obj.name)
        for wl in snap.workloads():
            names.update(c.name for c in wl.containers() if c.name)
    return frozenset(n for n in names if len(n) >= 3)


# -- validation ----------------------------------------------------------------------------


def _first_valid(
    repo: Path, inp: ReflectionInput, candidates: Iterable[Candidate], notes: list[str]
) -> tuple[tuple[Candidate, dict[str, str]] | None, bool]:
    """The first candidate that passes, its files, and whether it merged into a rule."""
    for candidate in candidates:
        snapshots = candidate.snapshots or inp.snapshots
        reasons = _generalisation(candidate, snapshots)
        if not reasons:
            existing = _same_rule(repo, candidate.rule)
            if existing is not None:
                files = _merged(repo, existing, candidate.rule)
                notes.append(f"{candidate.origin}: merged into {existing[0]} (the same logic)")
                return (candidate, files), True
            files = _memory_files(repo, candidate, snapshots)
            reasons = _reasons(repo, inp, files)
        if not reasons:
            return (candidate, files), False
        notes.append(f"{candidate.origin}: refused: " + "; ".join(reasons))
    return None, False


def rule_path(rule: Rule) -> str:
    return f"{MEMORY}/{RULES_DIR}/{rule.id}.yaml"


def _memory_files(repo: Path, candidate: Candidate, snapshots: Snapshots) -> dict[str, str]:
    book = parse_playbook(candidate.playbook_text, "candidate")
    files = {
        rule_path(candidate.rule): render_rule(candidate.rule),
        f"{MEMORY}/playbooks/{book.id}/README.md": candidate.playbook_text,
        INDEX_PATH: _indexed(repo, book),
    }
    return files | validate.case_files(candidate.rule.id, snapshots)


def _same_rule(repo: Path, rule: Rule) -> tuple[str, Rule] | None:
    for path in rule_files(repo):
        try:
            existing = read_rule(repo, path).rule
        except RuleError:
            continue
        if existing.same_logic(rule):
            return path.relative_to(repo).as_posix(), existing
    return None


def _merged(repo: Path, existing: tuple[str, Rule], new: Rule) -> dict[str, str]:
    rel, rule = existing
    if new.severity.is_worse(rule.severity):
        return {rel: render_rule(replace(rule, severity=new.severity))}
    return {}


def _indexed(repo: Path, book: Playbook) -> str:
    try:
        current = repofs.read_text(repo, INDEX_PATH)
    except OSError:  # none yet, or a link (never read: the forge refuses to write through it)
        current = (
            resources.files("gitmedic.bot") / "templates/init/playbooks-index.md"
        ).read_text()
    line = f"- [{book.id}]({book.id}/README.md): {book.title}\n"
    return current + ("" if current.endswith("\n") or not current else "\n") + line


def _reasons(repo: Path, inp: ReflectionInput, files: Mapping[str, str]) -> list[str]:
    clash = [p for p in files if "/cases/" not in p and p != INDEX_PATH and (repo / p).exists()]
    if clash:
        return [f"would overwrite {', '.join(clash)}"]
    leaked = validate.leaks(files, validate.secret_values(inp.snapshots))
    if leaked:
        return leaked
    return validate.guard_problems(repo, files, app_names(inp.snapshots))


def _generalisation(candidate: Candidate, snapshots: Snapshots) -> list[str]:
    """The rule fires on the same fault elsewhere, and its playbook routes and binds that."""
    text = render_rule(candidate.rule)
    names = [n for n in app_names(snapshots) if n in text]
    if names:
        return [f"the rule spells out names of the app: {', '.join(sorted(names))}"]
    if candidate.implicated is None:
        return ["the fix names no object to generalise from"]
    if candidate.snapshots is not None:
        # Renaming one object of a live snapshot breaks its pods' owner chain: the rule is
        # name-free instead, and must fire with the fixed fields holding other values.
        probe = validate.mutated(snapshots.pre_fix, candidate.implicated, candidate.changed)
        finding = validate.first_finding(text, probe)
        if finding is None:
            return ["the rule does not fire on the live snapshot with other values"]
    else:
        why, found = validate.generalises(
            text, snapshots.pre_fix, candidate.implicated, candidate.changed
        )
        if found is None:
            return [why]
        finding = found
    book = parse_playbook(candidate.playbook_text, "candidate")
    if not book.routes(finding):
        return [f"the playbook {book.id} does not route the rule's finding ({finding.detector})"]
    try:
        bind(book, finding)
    except PlaybookError as exc:
        return [f"the playbook's recipe does not bind the finding: {exc}"]
    return []


# -- the change ----------------------------------------------------------------------------


def _change(
    repo: Path,
    inp: ReflectionInput,
    written: tuple[Candidate, dict[str, str]] | None,
    merged: bool,
    notes: list[str],
) -> MemoryChange:
    files = dict(written[1]) if written else {}
    playbook_id = "" if not written or merged else parse_playbook(written[0].playbook_text, "x").id
    rule = _written_rule(repo, written, merged)
    memory = [m for m in (rule, playbook_id) if m]
    record = replace(inp.outcome, memory=(*inp.outcome.memory, *memory))
    files |= outcome_change(repo, record)
    kept = inp.outcome.commits if inp.outcome.status == "committed" else ()  # main has it
    files |= refreshed_architecture(repo, inp.snapshots.post_fix, kept, inp.app)
    stray = [p for p in files if not p.startswith(f"{MEMORY}/")]
    if stray:
        raise ValueError(f"a memory change may only touch {MEMORY}/, not {', '.join(stray)}")
    origin = written[0].origin if written else ""
    return MemoryChange(
        branch=f"gitmedic/{inp.incident}/memory",
        title=_title(inp, playbook_id, rule if merged else ""),
        body=_body(inp, origin, rule, playbook_id, merged, notes, ARCHITECTURE_PATH in files),
        files={path: redact_text(text) for path, text in files.items()},  # memory is published
        rule=rule,
        playbook=playbook_id,
        notes=tuple(notes),
        merged=merged,
    )


def _written_rule(
    repo: Path, written: tuple[Candidate, dict[str, str]] | None, merged: bool
) -> str:
    if written is None:
        return ""
    if merged:
        existing = _same_rule(repo, written[0].rule)
        return existing[0] if existing else ""
    return rule_path(written[0].rule)


def _title(inp: ReflectionInput, playbook_id: str, merged_into: str) -> str:
    if playbook_id:
        return f"gitmedic memory: learn {playbook_id} from {inp.incident}"
    if merged_into:
        return f"gitmedic memory: {inp.incident} confirms {Path(merged_into).stem}"
    return f"gitmedic memory: record the outcome of {inp.incident}"


def _body(
    inp: ReflectionInput,
    origin: str,
    rule: str,
    playbook: str,
    merged: bool,
    notes: list[str],
    architecture: bool = False,
) -> str:
    lines = [f"Memory from incident `{inp.incident}` ({inp.app}, fixed by {inp.strategy}).", ""]
    if rule and not merged:
        lines += [
            f"- rule `{rule}` ({origin}, CEL): fires on the pre-fix state, silent on the fixed, "
            "healthy and legitimate states, fires with the object renamed and other values",
            f"- playbook `{playbook}`: routes and binds the rule's finding; indexed",
        ]
    elif rule:
        lines.append(f"- rule `{rule}` already detects this ({origin}): merged, not added")
    lines.append("- one record appended to `.gitmedic/outcomes.jsonl`")
    if architecture:
        lines.append(f"- `{ARCHITECTURE_PATH}`: the topology at `{inp.outcome.commits[0][:12]}`")
    if notes:
        lines += ["", "Notes:", *(f"- {redact_text(n)}" for n in notes)]
    return "\n".join(lines) + "\n"
