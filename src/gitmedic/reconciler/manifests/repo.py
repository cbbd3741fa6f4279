"""The user's manifest repository: a local clone, its objects, and edits written safely.

``ManifestRepo.open(path)`` takes any path inside a git work tree (the manifests
may live in a sub-folder, which then scopes :meth:`objects` and :meth:`desired`).
Files are named relative to the repository root, as edits and findings name them.

- :meth:`ManifestRepo.desired` renders the desired state at any revision (the
  foundation's loader; ``rev`` reads git blobs without a checkout);
- :meth:`ManifestRepo.objects` lists each object with its file, document index and line;
- :meth:`ManifestRepo.read` / :meth:`ManifestRepo.value_at` read a file or one field
  at a revision (or the work tree);
- :meth:`ManifestRepo.apply` applies edits in order, all in memory first: if any
  edit fails nothing is written; files are then replaced through a temporary file
  and a rename, so a crash never leaves a half-written manifest.

History helpers (restore a field or an object, find the commit that last changed a
field) are in :mod:`.history`; git itself in :mod:`gitmedic.reconciler.git`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler import repofs
from gitmedic.reconciler.git import BOT, Git, Identity, UnknownRevision
from gitmedic.reconciler.manifests.apply import Applied, apply_edit
from gitmedic.reconciler.manifests.documents import (
    EditError,
    blob_sha,
    find_object,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.load import DesiredState, load_desired
from gitmedic.reconciler.manifests.paths import Path as FieldPath
from gitmedic.reconciler.manifests.paths import lookup
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure, git_toplevel

__all__ = ["ManifestRepo", "ObjectLocation"]


@dataclass(frozen=True)
class ObjectLocation:
    resource: Resource
    file: str
    document: int  # 0-based YAML document index in the file
    line: int  # 1-based line of the object's first key


class ManifestRepo:
    def __init__(
        self,
        root: str | os.PathLike[str],
        path: str = "",
        namespace: str = "default",
        identity: Identity = BOT,
        deployer: str = "",
    ) -> None:
        self.root = Path(root).resolve()
        self.path = path
        self.namespace = namespace
        self.deployer = deployer  # the app is this release at ``path`` (AppConfig.deployer)
        self.git = Git(self.root, identity)
        self._rendered_files: dict[str, list[str]] = {}

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], namespace: str = "default", deployer: str = ""
    ) -> ManifestRepo:
        p = Path(path).resolve()
        root = git_toplevel(p) if p.exists() else None
        if root is None:
            raise LoadFailure(f"{path}: not inside a git work tree")
        rel = p.relative_to(root.resolve()).as_posix()
        return cls(root, "" if rel == "." else rel, namespace, deployer=deployer)

    def desired(self, rev: str | None = None) -> DesiredState:
        where = self.root / self.path
        return load_desired(where, rev=rev, namespace=self.namespace, deployer=self.deployer)

    def history_paths(self) -> list[str]:
        """The paths whose commits change the app: its folder, and for a Helm app the
        values files and manifests holding values outside it (as configured now)."""
        from gitmedic.reconciler.config import ConfigError
        from gitmedic.reconciler.manifests.app_charts import configured_chart

        try:
            spec = configured_chart(FsTree(self.root), self.path, self.namespace)
        except (ConfigError, LoadFailure):
            spec = None
        extra = [*spec.values_files(), *(s.file for s in spec.sources)] if spec else []
        extra += self._rendered_from()
        inside = f"{self.path.rstrip('/')}/" if self.path else ""
        outside = [f for f in extra if inside and not f.startswith(inside)]
        return list(dict.fromkeys([*([self.path] if self.path else []), *outside]))

    def _rendered_from(self) -> list[str]:
        """The files a kustomize app's objects are read from (a shared base, an overlay's
        patch) at HEAD: a commit to a base outside the app's folder changes the app too.
        Cached per HEAD, as the render runs kubectl."""
        try:
            head = self.git.rev_parse("HEAD")
        except UnknownRevision:
            return []
        cached = self._rendered_files.get(head)
        if cached is None:
            try:
                objects = list(self.desired(head).snapshot)
            except LoadFailure:
                objects = []
            files = set()
            for obj in objects:
                src = obj.source
                if src is not None and src.renderer == "kustomize":
                    files.add(src.file)
                    files.update(o.file for o in src.origins if o.file)
            cached = self._rendered_files[head] = sorted(files)
        return cached

    def objects(self, rev: str | None = None) -> list[ObjectLocation]:
        out = []
        for obj in self.desired(rev).snapshot:
            if obj.source is not None:
                src = obj.source
                out.append(ObjectLocation(obj.ref, src.file, src.document, src.line))
        return sorted(out, key=lambda o: (o.file, o.line))

    def locate(self, resource: Resource, rev: str | None = None) -> str:
        """The file declaring ``resource`` at ``rev``."""
        files = {o.file for o in self.objects(rev) if o.resource == resource}
        if len(files) != 1:
            state = "not declared" if not files else f"declared in {len(files)} files"
            raise EditError(f"{resource.kind} {resource.namespace}/{resource.name} is {state}")
        return files.pop()

    def read(self, file: str, rev: str | None = None) -> str:
        data = self._read_bytes(_safe(file), rev)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EditError(f"{file} is not UTF-8 text (byte {exc.start})") from None

    def exists(self, file: str, rev: str | None = None) -> bool:
        try:
            self._read_bytes(_safe(file), rev)
        except EditError:
            return False
        return True

    def is_link(self, file: str) -> bool:
        """Is the work-tree ``file``, or a folder above it, a symbolic link?"""
        try:
            repofs.check_no_link(self.root, file)
        except repofs.LinkRefused:
            return True
        except PermissionError:  # not a path inside the repository at all
            return False
        return False

    def _read_bytes(self, file: str, rev: str | None) -> bytes:
        if rev is not None:
            try:
                return self.git.show_file(rev, file)
            except UnknownRevision as exc:
                raise EditError(str(exc)) from None
        try:
            return repofs.read_bytes(self.root, file)
        except repofs.LinkRefused as exc:
            raise EditError(str(exc)) from None
        except OSError as exc:
            raise EditError(f"{file}: {exc.strerror or exc}") from None

    def blob(self, file: str, rev: str | None = None) -> str:
        """The git blob id of the file's content (what edits record as ``base``)."""
        return blob_sha(self.read(file, rev).encode("utf-8"))

    def value_at(
        self, file: str, resource: Resource, path: FieldPath, rev: str | None = None
    ) -> tuple[bool, Any]:
        """(found, value) of a field; not found when the file or object is missing too."""
        if not self.exists(file, rev):
            return False, None
        chunks = split_chunks(split_lines(self.read(file, rev)))
        try:
            index = find_object(chunks, resource, file)
        except EditError:
            return False, None
        return lookup(chunks[index].data(), path)

    def apply(self, edits: Sequence[Edit]) -> list[Applied]:
        """Apply ``edits`` in order; write every changed file only once all succeeded."""
        contents: dict[str, str] = {}
        results = []
        for edit in edits:
            file = _safe(edit.file)
            current = contents[file] if file in contents else self.read(file)
            applied = apply_edit(current, edit)
            contents[file] = applied.content
            results.append(applied)
        for file, text in contents.items():
            _write_atomic(self.root / file, text.encode("utf-8"))
        return results


def _safe(file: str) -> str:
    """Edits may come from an LLM: only relative paths inside the repository."""
    p = PurePosixPath(file)
    if p.is_absolute() or ".." in p.parts or not p.parts or p.parts[0] == ".git":
        raise EditError(f"{file!r} is not a file path inside the repository")
    return p.as_posix()


def _write_atomic(target: Path, data: bytes) -> None:
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
