"""The responder's scratch space: the app at HEAD plus the edits accepted so far.

Strategies compute edits against the current content of a file (the history
helpers read it through the repo), and one incident may need fixes in the same
file for two findings, so every edit is computed against the content *after*
the edits already accepted: :class:`Workspace` serves those contents through an
overlay of :class:`ManifestRepo` and nothing touches the work tree.

:meth:`Workspace.check` is the in-memory gate strategies use to choose between
candidate fixes: the target finding is gone from the re-parsed desired state,
and no finding appeared that HEAD did not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gitmedic.bot.responder.proposal import Strategy
from gitmedic.bot.responder.states import DesiredStates, key
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.runner import run_detectors
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.apply import apply_edit
from gitmedic.reconciler.manifests.documents import EditError
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.paths import Path as FieldPath
from gitmedic.reconciler.manifests.rendered import restore_rendered
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.targets import edit_target


@dataclass(frozen=True)
class Fix:
    """Edits one strategy found for one finding, with the contents they produce."""

    strategy: Strategy
    edits: tuple[Edit, ...]
    contents: Mapping[str, str]
    diagnosis: str
    playbook: str | None = None
    commit: Commit | None = None
    walked: int = 0
    findings: tuple[Finding, ...] = field(default=())
    # Other values the evidence allows (no history to restore from): a person chooses.
    alternatives: tuple[str, ...] = ()


class _Overlay(ManifestRepo):
    """The repo, with some work-tree files read from memory instead."""

    def __init__(self, repo: ManifestRepo, contents: Mapping[str, str]) -> None:
        super().__init__(
            repo.root, repo.path, repo.namespace, repo.git.identity, deployer=repo.deployer
        )
        self._contents = contents

    def read(self, file: str, rev: str | None = None) -> str:
        if rev is None and file in self._contents:
            return self._contents[file]
        return super().read(file, rev)


class Workspace:
    def __init__(self, repo: ManifestRepo, states: DesiredStates, head: str) -> None:
        self.repo = repo
        self.states = states
        self.head = head
        self.contents: dict[str, str] = {}
        self.edited: set[Resource] = set()
        self._baseline = {key(f) for f in states.findings(head)}

    def overlay(self, contents: Mapping[str, str] | None = None) -> ManifestRepo:
        return _Overlay(self.repo, {**self.contents, **(contents or {})})

    def content(self, file: str, contents: Mapping[str, str] | None = None) -> str:
        return self.overlay(contents).read(file)

    def file_of(
        self, ref: Resource, rev: str | None = None, path: FieldPath | None = None
    ) -> str | None:
        """The file declaring ``ref``, or, for ``path``, the one setting that field (an
        overlay's patch, a values file) when it is not the declaring one."""
        obj = self.states.at(rev or self.head).get(ref.kind, ref.namespace, ref.name)
        return edit_target(obj, path) if obj is not None else None

    def restore(
        self,
        ref: Resource,
        paths: Sequence[FieldPath],
        rev: str,
        contents: Mapping[str, str],
        moved: Mapping[str, str] | None = None,
    ) -> list[Edit]:
        """Edits putting ``paths`` of ``ref`` back as at ``rev`` where they are written: the
        declaring file, an overlay's patch, a values key (EditError when no file sets one,
        or the file is another environment's too). ``moved``: file now -> file at ``rev``,
        for an object a later commit moved."""
        obj = self.states.at(self.head).get(ref.kind, ref.namespace, ref.name)
        if obj is None:
            return []
        return restore_rendered(self.overlay(contents), obj, paths, rev, moved)

    def applied(self, edits: Sequence[Edit], contents: Mapping[str, str]) -> dict[str, str]:
        """``contents`` (over the accepted ones) after ``edits``; EditError if one fails."""
        out = dict(contents)
        for edit in edits:
            out[edit.file] = apply_edit(self.content(edit.file, out), edit).content
        return out

    def present(self, finding: Finding, contents: Mapping[str, str] | None = None) -> bool:
        """Is the finding still in the desired state with the accepted (and given) edits?"""
        return any(key(f) == key(finding) for f in self._of_detector(finding, contents))

    def unchanged(self, finding: Finding, contents: Mapping[str, str]) -> bool:
        """Is the very same finding (params included) there with ``contents`` applied?"""
        prints = {f.fingerprint for f in self._of_detector(finding, contents)}
        return finding.fingerprint in prints

    def _of_detector(
        self, finding: Finding, contents: Mapping[str, str] | None
    ) -> tuple[Finding, ...]:
        snap = self.states.with_files(self.head, {**self.contents, **(contents or {})})
        detector = [d for d in self.states.detectors if d.id == finding.detector]
        return run_detectors(detector, snap).findings

    def check(self, finding: Finding, contents: Mapping[str, str]) -> bool:
        """The finding is gone and nothing new appeared, with ``contents`` applied."""
        snap = self.states.with_files(self.head, {**self.contents, **contents})
        after = {key(f) for f in self.states.findings_of(snap)}
        return key(finding) not in after and after <= self._baseline

    def accept(self, fix: Fix) -> None:
        self.contents.update(fix.contents)
        self.edited.update(e.resource for e in fix.edits)

    def try_edits(self, edits: Sequence[Edit]) -> dict[str, str] | None:
        try:
            return self.applied(edits, {})
        except EditError:
            return None
