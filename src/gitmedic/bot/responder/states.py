"""Desired state of one application at any revision, cached per file blob, and in memory.

Bisect renders the app at many revisions; consecutive revisions differ in a file
or two, so each file's objects are parsed once per blob id (``git ls-tree`` gives
the ids, ``git cat-file`` the bytes) and a revision's snapshot is the union of
its files. A folder rendered by kustomize cannot be split by file: such an app
falls back to the loader, cached per revision's tree of the app path.

:meth:`DesiredStates.with_files` is the in-memory state after edits: the HEAD
files with some contents replaced, re-parsed, so strategies can check that a
candidate fix clears a finding (and adds none) without writing anything.
Findings are compared by :func:`key` (detector, rule, resource), not by
fingerprint: a fix may change a finding's params without changing what it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from gitmedic.bot.responder.undone import undone_commits
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.registry import Registry
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import CLUSTER_SCOPED, Mode, Obj, Snapshot, Source
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.git import SYMLINK_MODE, Commit, UnknownRevision
from gitmedic.reconciler.manifests.edited import render_with
from gitmedic.reconciler.manifests.kustomize_refs import KUSTOMIZATION_FILES
from gitmedic.reconciler.manifests.load import MANIFEST_SUFFIXES, load_desired
from gitmedic.reconciler.manifests.parse import parse_text
from gitmedic.reconciler.manifests.repo import ManifestRepo

FindingKey = tuple[str, str, Resource]
# files that make an app rendered (kustomize, a Helm chart), kept whatever their folder
_RENDER_ROOTS = (*KUSTOMIZATION_FILES, "Chart.yaml")


def key(finding: Finding) -> FindingKey:
    """What a finding is about, whatever its params say (a fix may change those)."""
    return (finding.detector, finding.rule, finding.resource)


@dataclass(frozen=True)
class _Parsed:
    objects: tuple[Obj, ...]
    foreign: bool


class DesiredStates:
    """The app's desired state at revisions of its repo, with detector runs cached."""

    def __init__(
        self, repo: ManifestRepo, detectors: Registry, context: Sequence[Obj] = ()
    ) -> None:
        self.repo = repo
        # Cluster objects no repo declares but detectors judge by (Nodes, from the live
        # state): without them a nodeSelector or a huge request cannot be judged.
        self.context = tuple(context)
        self.detectors = Registry(d for d in detectors if d.spec.scope.applies_to(Mode.DESIRED))
        self._blobs: dict[tuple[str, str], _Parsed] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._findings: dict[tuple[str, str], tuple[Finding, ...]] = {}
        self._entries: dict[str, dict[str, str]] = {}

    # -- revisions --------------------------------------------------------------------

    def commits(self, limit: int, rev: str = "HEAD", also: Sequence[str] = ()) -> list[Commit]:
        """Commits touching the app's path (and the files ``also`` names), newest first,
        at most ``limit``.

        Commits a later exact revert cancelled (a fix undone, and its revert) are left
        out: their net change is nothing, and undoing them would re-propose the undone fix.
        """
        # a Helm app's values files may live outside its chart folder: their commits count
        paths = list(dict.fromkeys([*self.repo.history_paths(), *also]))
        walked = self.repo.git.log(*paths, rev=rev, max_count=limit)
        undone = undone_commits(self.repo.git, self.repo.path, rev)
        return [c for c in walked if c.sha not in undone]

    def resolve(self, rev: str) -> str | None:
        try:
            return self.repo.git.rev_parse(f"{rev}^{{commit}}")
        except UnknownRevision:
            return None

    def has_app(self, rev: str) -> bool:
        return bool(self._app_files(rev))

    def at(self, rev: str) -> Snapshot:
        """The desired state at ``rev`` (a commit id or name)."""
        sha = self.resolve(rev)
        if sha is None:
            return Snapshot((), mode=Mode.DESIRED, revision=rev)
        if sha not in self._snapshots:
            self._snapshots[sha] = self._render(sha)
        return self._snapshots[sha]

    def findings(self, rev: str, detector: str | None = None) -> tuple[Finding, ...]:
        """Findings at ``rev``: of one detector, or of all desired-state detectors."""
        sha = self.resolve(rev) or rev
        cache_key = (sha, detector or "*")
        if cache_key not in self._findings:
            chosen = self._chosen(detector)
            snap = self.at(sha)
            self._findings[cache_key] = run_detectors(chosen, snap).findings if chosen else ()
        return self._findings[cache_key]

    def visible(self, finding: Finding, rev: str) -> bool:
        """Is this finding (same detector, rule and resource) in the desired state at rev?"""
        return any(key(f) == key(finding) for f in self.findings(rev, finding.detector))

    def judges(self, finding: Finding) -> bool:
        """Can the finding's detector run on desired state at all?"""
        return finding.detector in self.detectors

    def _chosen(self, detector: str | None) -> list[Detector]:
        if detector is None:
            return list(self.detectors)
        return [self.detectors.get(detector)] if detector in self.detectors else []

    # -- in memory --------------------------------------------------------------------

    def with_files(self, rev: str, contents: Mapping[str, str]) -> Snapshot:
        """The state at ``rev`` with some files' contents replaced (re-parsed; a rendered
        app, kustomize or Helm, is rendered again: an edited patch changes its output)."""
        sha = self.resolve(rev)
        if contents and sha is not None and self._renders(self._app_files(sha)):
            state = render_with(
                self.repo.root,
                sha,
                self.repo.path,
                self.repo.namespace,
                contents,
                deployer=self.repo.deployer,
            )
            objects = [*state.snapshot, *self.context]
            schema = state.snapshot.schema
            return Snapshot(objects, mode=Mode.DESIRED, revision=f"{rev}+edits", schema=schema)
        base = [o for o in self.at(rev) if o.source is None or o.source.file not in contents]
        extra = [o for file, text in sorted(contents.items()) for o in self._parse(text, file)]
        return Snapshot([*base, *extra], mode=Mode.DESIRED, revision=f"{rev}+edits")

    def _renders(self, files: Mapping[str, str]) -> bool:
        """Is the app rendered (kustomize, Helm, or a release's chart from a repository),
        not read file by file? A release's chart is rendered only by the loader."""
        return bool(self.repo.deployer) or _rendered(files)

    def findings_of(self, snapshot: Snapshot) -> tuple[Finding, ...]:
        return run_detectors(self.detectors, snapshot).findings

    # -- rendering --------------------------------------------------------------------

    def _render(self, sha: str) -> Snapshot:
        files = self._app_files(sha)
        if self._renders(files):
            ns = self.repo.namespace
            where = self.repo.root / self.repo.path
            state = load_desired(where, rev=sha, namespace=ns, deployer=self.repo.deployer)
            # with the loader's schema check, as :meth:`with_files` has it: a finding only
            # one of them can see (a custom kind's "not validated") reads as new to a fix
            rendered = [*state.snapshot, *self.context]
            schema = state.snapshot.schema
            return Snapshot(rendered, mode=Mode.DESIRED, revision=sha, schema=schema)
        explicit = len(files) == 1 and next(iter(files)) == self.repo.path
        objects: list[Obj] = list(self.context)
        for file, blob in sorted(files.items()):
            parsed = self._parsed(blob, file, sha)
            if explicit or not parsed.foreign:
                objects.extend(parsed.objects)
        return Snapshot(objects, mode=Mode.DESIRED, revision=sha)

    def _app_files(self, rev: str) -> dict[str, str]:
        """Manifest files of the app at ``rev``: path -> blob id (hidden files and charts out)."""
        sha = self.resolve(rev)
        if sha is None:
            return {}
        if sha not in self._entries:
            self._entries[sha] = _select(self._ls_tree(sha), self.repo.path)
        return self._entries[sha]

    def _ls_tree(self, sha: str) -> dict[str, str]:
        out = self.repo.git.run("ls-tree", "-r", "-z", "--full-tree", sha).stdout
        entries = {}
        for record in out.split("\0"):
            meta, _, name = record.partition("\t")
            parts = meta.split()
            # a symbolic link is no manifest (the loader reports it as refused)
            if len(parts) == 3 and parts[1] == "blob" and parts[0] != SYMLINK_MODE:
                entries[name] = parts[2]
        return entries

    def _parsed(self, blob: str, file: str, sha: str) -> _Parsed:
        if (blob, file) not in self._blobs:
            text = self.repo.read(file, sha)
            parsed = parse_text(text, file)
            objects = tuple(
                self._to_obj(p.body, Source(file, p.line, p.document)) for p in parsed.objects
            )
            self._blobs[(blob, file)] = _Parsed(objects, parsed.foreign)
        return self._blobs[(blob, file)]

    def _parse(self, text: str, file: str) -> list[Obj]:
        parsed = parse_text(text, file)
        return [self._to_obj(p.body, Source(file, p.line, p.document)) for p in parsed.objects]

    def _to_obj(self, body: dict[str, object], source: Source) -> Obj:
        meta = body["metadata"]
        assert isinstance(meta, dict)
        kind = str(body["kind"])
        ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or self.repo.namespace)
        if ns and meta.get("namespace") != ns:
            body = {**body, "metadata": {**meta, "namespace": ns}}
        return Obj(Resource(kind, ns, str(meta["name"]), str(body["apiVersion"])), body, source)


def _rendered(files: Mapping[str, str]) -> bool:
    return any(PurePosixPath(f).name in (*KUSTOMIZATION_FILES, "Chart.yaml") for f in files)


def _select(entries: Mapping[str, str], app_path: str) -> dict[str, str]:
    if app_path in entries:
        return {app_path: entries[app_path]}
    prefix = f"{app_path.rstrip('/')}/" if app_path else ""
    inside = {n: b for n, b in entries.items() if n.startswith(prefix)}
    charts = {str(PurePosixPath(n).parent) for n in inside if PurePosixPath(n).name == "Chart.yaml"}
    return {
        n: b
        for n, b in inside.items()
        if n.endswith(MANIFEST_SUFFIXES)
        and not any(p.startswith(".") for p in PurePosixPath(n[len(prefix) :]).parts)
        and not any(n.startswith(f"{c}/") for c in charts)
    } | {n: b for n, b in inside.items() if PurePosixPath(n).name in _RENDER_ROOTS}
