"""Reflection: after a committed fix no playbook covered, write memory so the next one is free.

Input: the incident's findings, the fix (strategy, edits, diagnosis, the commit
that introduced the fault), the pre-fix, post-fix and healthy snapshots, and the
outcome record. Output: a :class:`MemoryChange`, files under ``.gitmedic/`` only
(plus a branch name, PR title and body) that the caller turns into a memory PR.

The memory written, in order of preference:

0. after undone attempts (a candidate was deployed, caused new findings and was
   reverted before this fix committed), the lesson of :mod:`.lesson`: the fields
   the first candidate missed, restored together next time (validated on the
   incident's live snapshots). Undone attempts also mean the playbooks that
   made the fix did not cover the fault, so they do not skip reflection;
1. for the LLM strategy (a novel fault), a detector and playbook the LLM writes;
2. a templated field rule (see :mod:`.fixshape` and :mod:`.templated`): the
   most general rule candidate that passes validation;
3. nothing but the outcome, with the reasons every candidate was refused.

A candidate passes when the memory guard accepts it with its cases (fires on the
pre-fix snapshot, silent on the post-fix and healthy ones, the playbook parses,
has no literal names, is indexed), it still fires with the implicated object
renamed, its playbook routes and binds the finding, and no file leaks a secret.
The outcome record is appended in every case (once per incident).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from gitmedic.bot.memory import lesson, validate
from gitmedic.bot.memory.fixshape import leaf_changes, rules_for
from gitmedic.bot.memory.guard import MEMORY
from gitmedic.bot.memory.llm_memory import REFLECTION_BUDGET, ask_for_memory
from gitmedic.bot.memory.outcomes import OutcomeRecord, outcome_change
from gitmedic.bot.memory.templated import Context, render_detector, render_playbook, slug, symptoms
from gitmedic.bot.memory.validate import Snapshots
from gitmedic.bot.responder.llm import Budget, Completion
from gitmedic.bot.responder.playbooks import Playbook, PlaybookError, bind, parse_playbook
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.redact import redact_text

INDEX_PATH = f"{MEMORY}/playbooks/README.md"
MAX_CANDIDATES = 8


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


@dataclass(frozen=True)
class LlmConfig:
    model: str
    completion: Completion | None = None  # None: litellm; tests inject a scripted one
    budget: Budget = REFLECTION_BUDGET


@dataclass(frozen=True)
class MemoryChange:
    branch: str
    title: str
    body: str
    files: Mapping[str, str]  # repo-relative path -> full new content, all under .gitmedic/
    detector: str  # the learned detector's module path, "" when none was written
    playbook: str  # the learned playbook's id, "" when none was written
    notes: tuple[str, ...]  # why memory was (not) written, one line per refused candidate
    tokens: int  # spent by reflection itself


@dataclass(frozen=True)
class Candidate:
    origin: str  # "llm", "template: <rule>" or "lesson: <slug>"
    stem: str
    detector_source: str
    playbook_text: str
    snapshots: Snapshots | None = None  # its cases, when not the desired states


def reflect(repo: Path, inp: ReflectionInput, *, llm: LlmConfig | None = None) -> MemoryChange:
    notes: list[str] = []
    tokens, cost, written = 0, 0.0, None
    skip = _skip_reason(inp)
    if skip:
        notes.append(skip)
    else:
        if inp.undone:
            written = _first_valid(repo, inp, _lesson(repo, inp, notes), notes)
        if written is None and inp.strategy == "llm" and llm is not None:
            candidate, tokens, cost = _llm_candidate(inp, llm, notes)
            written = _first_valid(repo, inp, [candidate] if candidate else [], notes)
        if written is None:
            written = _first_valid(repo, inp, _templated(repo, inp, notes), notes)
        if written is None:
            notes.append("no detector written: no candidate passed validation")
    return _change(repo, inp, written, notes, tokens, cost)


def _skip_reason(inp: ReflectionInput) -> str:
    if inp.outcome.status != "committed":
        return f"no memory: the transaction ended {inp.outcome.status}, not committed"
    if inp.outcome.playbooks_applied and not inp.undone:
        covered = ", ".join(inp.outcome.playbooks_applied)
        return f"no memory: the playbook {covered} already covers this fault"
    return ""


# -- candidates ----------------------------------------------------------------------------


def _llm_candidate(
    inp: ReflectionInput, llm: LlmConfig, notes: list[str]
) -> tuple[Candidate | None, int, float]:
    implicated = {
        f"{role} {ref}": body
        for ref in dict.fromkeys(e.resource for e in inp.edits)
        for role, body in _bodies(inp.snapshots, ref)
    }
    drafted = ask_for_memory(
        model=llm.model, completion=llm.completion, findings=inp.findings, edits=inp.edits,
        implicated=implicated, diagnosis=inp.diagnosis, budget=llm.budget,
    )  # fmt: skip
    notes += drafted.notes
    if not drafted.detector or not drafted.playbook:
        notes.append(f"LLM: wrote no usable detector and playbook ({drafted.stopped})")
        return None, drafted.usage_tokens, drafted.cost_usd
    try:
        book = parse_playbook(drafted.playbook, "llm")
    except PlaybookError as exc:
        notes.append(f"LLM: {exc}")
        return None, drafted.usage_tokens, drafted.cost_usd
    stem = book.id.replace("-", "_")
    return (
        Candidate("llm", stem, drafted.detector, drafted.playbook),
        drafted.usage_tokens,
        drafted.cost_usd,
    )


def _bodies(snapshots: Snapshots, ref: Resource) -> Iterator[tuple[str, Mapping[str, object]]]:
    for role, snap in (("before the fix", snapshots.pre_fix), ("after", snapshots.post_fix)):
        obj = snap.get(ref.kind, ref.namespace, ref.name)
        if obj is not None:
            yield role, obj.body


def _lesson(repo: Path, inp: ReflectionInput, notes: list[str]) -> Iterator[Candidate]:
    found = lesson.lesson_of(inp.findings, inp.edits, inp.undone, inp.caused)
    if isinstance(found, str) or inp.live is None:
        notes.append(found if isinstance(found, str) else "lesson: no live snapshots")
        return
    playbook_id = _fresh(repo, lesson.playbook_slug(found))
    detector_id = f"learned-{playbook_id}"
    ctx = _context(inp)
    yield Candidate(
        f"lesson {playbook_id}",
        playbook_id.replace("-", "_"),
        lesson.render_detector(found, detector_id, playbook_id, ctx),
        lesson.render_playbook(found, detector_id, playbook_id, ctx),
        inp.live,
    )


def _templated(repo: Path, inp: ReflectionInput, notes: list[str]) -> Iterator[Candidate]:
    names = app_names(inp.snapshots)
    changes = leaf_changes(inp.edits, inp.snapshots.pre_fix)
    if not changes:
        notes.append("template: the fix changes no field of an object in the pre-fix snapshot")
        return
    ctx = _context(inp)
    rules = [r for c in changes for r in rules_for(c, names)][:MAX_CANDIDATES]
    if not rules:
        notes.append("template: every changed value names an object or may be a credential")
    for rule in rules:
        playbook_id = _fresh(repo, slug(rule))
        detector_id = f"learned-{playbook_id}"
        yield Candidate(
            f"template {rule.predicate} on {slug(rule)}",
            playbook_id.replace("-", "_"),
            render_detector(rule, detector_id, playbook_id, ctx),
            render_playbook(rule, detector_id, playbook_id, ctx),
        )


def _context(inp: ReflectionInput) -> Context:
    worst = max((f.severity for f in inp.findings), key=lambda s: s.rank, default=Severity.WARNING)
    diagnosis = redact_text(inp.diagnosis)
    for ref in {e.resource for e in inp.edits}:
        diagnosis = re.sub(rf"\b{re.escape(ref.name)}\b", "{name}", diagnosis)
    return Context(
        incident=inp.incident,
        strategy=inp.strategy,
        commit=inp.introducing_commit,
        diagnosis=diagnosis,
        symptoms=symptoms([f"`{f.detector}`: {redact_text(f.summary)}" for f in inp.findings]),
        severity=worst.name,
    )


def _fresh(repo: Path, base: str) -> str:
    taken = {p.name for p in (repo / MEMORY / "playbooks").glob("*")}
    taken |= {p.stem.replace("_", "-") for p in (repo / MEMORY / "detectors").glob("*.py")}
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


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
    repo: Path, inp: ReflectionInput, candidates: Iterator[Candidate] | list[Candidate],
    notes: list[str],
) -> tuple[Candidate, dict[str, str]] | None:  # fmt: skip
    for candidate in candidates:
        files = _memory_files(repo, candidate, candidate.snapshots or inp.snapshots)
        reasons = _reasons(repo, inp, candidate, files)
        if not reasons:
            return candidate, files
        notes.append(f"{candidate.origin}: refused: " + "; ".join(reasons))
    return None


def _memory_files(repo: Path, candidate: Candidate, snapshots: Snapshots) -> dict[str, str]:
    book = parse_playbook(candidate.playbook_text, "candidate")
    files = {
        f"{MEMORY}/detectors/{candidate.stem}.py": candidate.detector_source,
        f"{MEMORY}/playbooks/{book.id}/README.md": candidate.playbook_text,
        INDEX_PATH: _indexed(repo, book),
    }
    return files | validate.case_files(candidate.stem, snapshots)


def _indexed(repo: Path, book: Playbook) -> str:
    path = repo / INDEX_PATH
    if path.is_file():
        current = path.read_text()
    else:
        current = (
            resources.files("gitmedic.bot") / "templates/init/playbooks-index.md"
        ).read_text()
    line = f"- [{book.id}]({book.id}/README.md): {book.title}\n"
    return current + ("" if current.endswith("\n") or not current else "\n") + line


def _reasons(
    repo: Path, inp: ReflectionInput, candidate: Candidate, files: Mapping[str, str]
) -> list[str]:
    clash = [p for p in files if "/cases/" not in p and p != INDEX_PATH and (repo / p).exists()]
    if clash:
        return [f"would overwrite {', '.join(clash)}"]
    leaked = validate.leaks(files, validate.secret_values(inp.snapshots))
    if leaked:
        return leaked
    problems = validate.guard_problems(repo, files, app_names(inp.snapshots))
    if problems:
        return problems
    book = parse_playbook(candidate.playbook_text, "candidate")
    return _generalisation(candidate, inp, book)


def _generalisation(candidate: Candidate, inp: ReflectionInput, book: Playbook) -> list[str]:
    if candidate.snapshots is not None:
        return _lesson_generalises(candidate, inp, book)
    refs = list(dict.fromkeys(e.resource for e in inp.edits))
    if not refs:
        return ["the fix names no object to generalise from"]
    reason, finding = validate.generalises(
        candidate.detector_source, inp.snapshots.pre_fix, refs[0]
    )
    if reason or finding is None:
        return [reason or "does not fire on the renamed object"]
    if not book.routes(finding):
        return [
            f"the playbook {book.id} does not route the detector's finding ({finding.detector})"
        ]
    try:
        bind(book, finding)
    except PlaybookError as exc:
        return [f"the playbook's recipe does not bind the finding: {exc}"]
    return []


def _lesson_generalises(candidate: Candidate, inp: ReflectionInput, book: Playbook) -> list[str]:
    """A lesson is a template with no name in it; its finding must route and bind.

    (Renaming one object of a live snapshot breaks its pods' owner chain, so the
    rename probe of field rules cannot apply: the template is name-free instead.)
    """
    names = [n for n in app_names(inp.snapshots) if n in candidate.detector_source]
    if names:
        return [f"the detector spells out names of the app: {', '.join(sorted(names))}"]
    live = candidate.snapshots.pre_fix if candidate.snapshots else inp.snapshots.pre_fix
    finding = validate.first_finding(candidate.detector_source, live)
    if finding is None:
        return ["the detector does not fire on the live snapshot before the fix"]
    if not book.routes(finding):
        return [f"the playbook {book.id} does not route the detector's finding"]
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
    notes: list[str],
    tokens: int,
    cost: float,
) -> MemoryChange:
    files = dict(written[1]) if written else {}
    playbook_id = parse_playbook(written[0].playbook_text, "x").id if written else ""
    detector_path = f"{MEMORY}/detectors/{written[0].stem}.py" if written else ""
    record = replace(
        inp.outcome,
        tokens=inp.outcome.tokens + tokens,
        cost_usd=inp.outcome.cost_usd + cost,
        memory=(*inp.outcome.memory, *([detector_path, playbook_id] if written else [])),
    )
    files |= outcome_change(repo, record)
    stray = [p for p in files if not p.startswith(f"{MEMORY}/")]
    if stray:
        raise ValueError(f"a memory change may only touch {MEMORY}/, not {', '.join(stray)}")
    origin = written[0].origin if written else ""
    return MemoryChange(
        branch=f"gitmedic/{inp.incident}/memory",
        title=_title(inp, playbook_id),
        body=_body(inp, origin, detector_path, playbook_id, notes),
        files={path: redact_text(text) for path, text in files.items()},  # memory is published
        detector=detector_path,
        playbook=playbook_id,
        notes=tuple(notes),
        tokens=tokens,
    )


def _title(inp: ReflectionInput, playbook_id: str) -> str:
    if playbook_id:
        return f"gitmedic memory: learn {playbook_id} from {inp.incident}"
    return f"gitmedic memory: record the outcome of {inp.incident}"


def _body(inp: ReflectionInput, origin: str, detector: str, playbook: str, notes: list[str]) -> str:
    lines = [f"Memory from incident `{inp.incident}` ({inp.app}, fixed by {inp.strategy}).", ""]
    if detector:
        lines += [
            f"- detector `{detector}` ({origin}): fires on the pre-fix state, silent on the "
            "fixed and healthy states, fires on a renamed copy of the object",
            f"- playbook `{playbook}`: routes and binds the detector's finding; indexed",
        ]
    lines.append("- one record appended to `.gitmedic/outcomes.jsonl`")
    if notes:
        lines += ["", "Notes:", *(f"- {redact_text(n)}" for n in notes)]
    return "\n".join(lines) + "\n"
