"""The playbook strategy: route a finding, bind the recipe, restore the fields from history.

Playbooks are routed learned-first (``.gitmedic/playbooks`` of the manifest repo,
then the built-in ones). A ``runtime_only`` playbook (a B-class fault) carries no
fix and is skipped here: the responder asks it, through :func:`runtime_only`,
only after the strategies that change desired state found nothing, so a generic
runtime hypothesis never hides a Git change that explains the finding. Otherwise
the recipe's bound paths of its target object are put back to their last
known-good value:

- a finding the desired state shows: the good revision is the parent of the
  commit that introduced it (:func:`~.bisect.find_introduction`); the bound
  paths are widened to the whole field group that commit changed
  (:func:`~.bisect.commit_paths`), since restoring part of a fault is not the
  original; the restore must clear the finding in the re-parsed desired state
  without a new one (else the bound paths alone are tried);
- a finding only the live state shows (a crash loop whose recipe points at the
  container's command): each bound field goes back to its value before the
  commit that last changed it, when that commit is recent relative to the
  incident (older changes ran fine for a while and are not the cause); a
  learned playbook looks back at any age (within ``max_commits``): the repo's
  own verdict on a class whose rule already narrowed the symptom to a container
  that sets the field, learned from a change that rolled out long after its
  commit (a latent entrypoint);
- no good revision (a fault there since the app's first commit): the value the
  evidence determines (:mod:`.no_history`: several that fit are proposed for a
  person to choose), else the recipe's fallback values (computed from the
  finding's params), as ``set`` edits (``insert`` where the field is missing).
  With a good revision no value is guessed: when the recipe's fields did not
  change there, bisect finds what did (a related object).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gitmedic.bot.responder.bisect import Introduction, commit_paths, find_introduction
from gitmedic.bot.responder.levers.evidence import Bounds
from gitmedic.bot.responder.live_blame import last_change_of
from gitmedic.bot.responder.no_history import evidence_fix
from gitmedic.bot.responder.playbooks import BoundFix, Playbook, PlaybookError, bind, route
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, blob_sha
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import Path, PathError, format_path, lookup, parse_path

LEARNED = ".gitmedic/"  # where a repo's learned playbooks come from


@dataclass(frozen=True)
class Limits:
    max_commits: int = 50
    recent_s: float = 3 * 86400.0
    levers: Bounds = field(default_factory=Bounds)


def playbook_fix(
    ws: Workspace,
    finding: Finding,
    playbooks: Sequence[Playbook],
    since: float,
    limits: Limits,
) -> Fix | None:
    for playbook in route(playbooks, finding):
        if playbook.runtime_only or playbook.fix is None:
            continue
        try:
            bound = bind(playbook, finding)
            paths = [parse_path(p) for p in bound.paths]
        except (PlaybookError, PathError):
            continue
        window = float("-inf") if playbook.source.startswith(LEARNED) else since
        fix = _restore_bound(ws, finding, bound, paths, window, limits)
        if fix is not None:
            return fix
    return None


def runtime_only(playbooks: Sequence[Playbook], finding: Finding) -> list[Playbook]:
    """The runtime-only playbooks routed to by ``finding``, learned ones first."""
    return [p for p in route(playbooks, finding) if p.runtime_only]


def _restore_bound(
    ws: Workspace,
    finding: Finding,
    bound: BoundFix,
    paths: list[Path],
    since: float,
    limits: Limits,
) -> Fix | None:
    file = ws.file_of(bound.target)
    if file is None:
        return None
    desired = ws.states.judges(finding) and ws.states.visible(finding, ws.head)
    try:
        if not desired:
            fix = _from_last_change(ws, finding, bound, paths, file, since)
            return fix or _from_fallback(ws, finding, bound, file, desired)
        intro = find_introduction(ws.states, finding, limits.max_commits)
        if intro is not None:  # history knows the good value: never a guess over it
            return _from_introduction(ws, finding, bound, paths, file, intro)
        fix = evidence_fix(ws, finding, bound)
        return fix or _from_fallback(ws, finding, bound, file, desired)
    except EditError:
        return None


def _from_introduction(
    ws: Workspace,
    finding: Finding,
    bound: BoundFix,
    paths: list[Path],
    file: str,
    intro: Introduction,
) -> Fix | None:
    if ws.file_of(bound.target, intro.parent) != file:
        return None
    wider = commit_paths(ws, finding, intro, bound.target, paths)
    for attempt in dict.fromkeys([tuple(wider), tuple(paths)]):
        fix = _restore_at(ws, finding, bound, list(attempt), file, intro)
        if fix is not None:
            return fix
    return None


def _restore_at(
    ws: Workspace,
    finding: Finding,
    bound: BoundFix,
    paths: list[Path],
    file: str,
    intro: Introduction,
) -> Fix | None:
    """The recipe's fields (as widened to what the commit changed) as before ``intro``."""
    edits = ws.restore(bound.target, paths, intro.parent, {})
    contents = ws.applied(edits, {})
    if not edits or not ws.check(finding, contents):
        return None
    text = _text(finding, paths, bound, intro.commit, "introduced by")
    return Fix("playbook", tuple(edits), contents, text, bound.playbook, intro.commit, intro.walked)


def _from_last_change(
    ws: Workspace, finding: Finding, bound: BoundFix, paths: list[Path], file: str, since: float
) -> Fix | None:
    edits: list[Edit] = []
    contents: dict[str, str] = {}
    newest: Commit | None = None
    for path in paths:
        commit = last_change_of(ws, bound.target, path, since)
        if commit is None or not commit.parents:
            continue
        good = commit.parents[0]
        # where the object was then: a later commit may have moved it to another file
        moved = {file: old} if (old := ws.file_of(bound.target, good)) else {}
        step = ws.restore(bound.target, [path], good, contents, moved=moved)
        contents = ws.applied(step, contents)
        edits += step
        newest = commit if newest is None or commit.timestamp > newest.timestamp else newest
    if not edits or newest is None:
        return None
    text = _text(finding, paths, bound, newest, "last changed by")
    return Fix("playbook", tuple(edits), contents, text, bound.playbook, newest)


def _from_fallback(
    ws: Workspace, finding: Finding, bound: BoundFix, file: str, desired: bool
) -> Fix | None:
    if not bound.fallback:
        return None
    edits: list[Edit] = []
    contents: dict[str, str] = {}
    for text_path, value in bound.fallback.items():
        path = parse_path(text_path)
        doc = ws.states.at(ws.head).get(
            bound.target.kind, bound.target.namespace, bound.target.name
        )
        found = doc is not None and lookup(doc.body, path)[0]
        edit = Edit(Op.SET if found else Op.INSERT, file, bound.target, path, value)
        edit = edit.with_base(_blob(ws.content(file, contents)))
        contents = ws.applied([edit], contents)
        edits.append(edit)
    if desired and not ws.check(finding, contents):
        return None
    shown = ", ".join(f"{k} = {v!r}" for k, v in bound.fallback.items())
    text = (
        f"{finding.summary} ({finding.detector}). Git history holds no good value; "
        f"playbook {bound.playbook} sets {shown} on {bound.target}."
    )
    return Fix("playbook", tuple(edits), contents, text, bound.playbook)


def _text(finding: Finding, paths: list[Path], bound: BoundFix, commit: Commit, how: str) -> str:
    fields = ", ".join(format_path(p) for p in paths)
    return (
        f"{finding.summary} ({finding.detector}). Playbook {bound.playbook}: {fields} of "
        f'{bound.target} {how} {commit.sha[:12]} "{commit.subject}" ({commit.author}); '
        f"restored to the value before it."
    )


def _blob(content: str) -> str:
    return blob_sha(content.encode("utf-8"))
