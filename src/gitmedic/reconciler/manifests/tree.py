"""Where manifest files are read from: the working tree, or a git revision without checkout.

Neither follows a symbolic link: the work tree is read through
:mod:`gitmedic.reconciler.repofs` and a revision's links (mode 120000) are not
files; :meth:`Tree.links` lists them so the loader can say why they are refused.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from pathlib import Path, PurePosixPath
from typing import Protocol

from gitmedic.reconciler import gitcmd, repofs
from gitmedic.reconciler.git import SYMLINK_MODE
from gitmedic.reconciler.gitcmd import Popen
from gitmedic.reconciler.manifests.parse import MAX_FILE_BYTES


class LoadFailure(Exception):
    """The input as a whole cannot be read (missing path, unknown revision, not a repo)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line  # 1-based, when the failure has a place in a file


class Tree(Protocol):
    root: Path  # the repository's work tree
    revision: str

    def is_file(self, rel: str) -> bool: ...
    def files(self, rel: str) -> list[str]: ...
    def read_text(self, rel: str) -> str: ...
    def links(self, rel: str) -> list[str]: ...
    def is_link(self, rel: str) -> bool: ...
    def materialize(self, rel: str) -> AbstractContextManager[Path]: ...


# within one_toplevel_per_folder(): each folder's answer, asked of git once
_TOPLEVELS: ContextVar[dict[Path, Path | None] | None] = ContextVar("toplevels", default=None)


@contextmanager
def one_toplevel_per_folder() -> Iterator[None]:
    """Within it, :func:`git_toplevel` asks git once per folder: a command that reads the
    tree once (``detect`` asked four times, ~2 ms of CPU a ``git`` process). Not for a
    long-lived process, where a folder may become a repository."""
    token = _TOPLEVELS.set({})
    try:
        yield
    finally:
        _TOPLEVELS.reset(token)


def git_toplevel(path: Path) -> Path | None:
    start = path if path.is_dir() else path.parent
    while not start.exists():
        start = start.parent
    known = _TOPLEVELS.get()
    if known is not None and start in known:
        return known[start]
    proc = gitcmd.run(start, "rev-parse", "--show-toplevel")
    found = Path(proc.stdout.strip()) if proc.returncode == 0 else None
    if known is not None:
        known[start] = found
    return found


def _decode(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise LoadFailure(f"not UTF-8 text (byte {exc.start})", line) from None


class FsTree:
    """Files of the working tree; names are relative to the repo root (or the path's folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.revision = ""

    @classmethod
    def around(
        cls, path: Path, reach: Callable[[Path], list[Path]] | None = None
    ) -> tuple[FsTree, str]:
        """The git work tree holding ``path``. Outside one, the current folder when it
        holds ``path``, else ``path``'s folder, widened to the common folder of what
        ``reach(folder)`` names (an overlay's ``../../base``)."""
        path = path.resolve()
        root = git_toplevel(path)
        if root is None:
            cwd = Path.cwd().resolve()
            root = cwd if path.is_relative_to(cwd) else (path if path.is_dir() else path.parent)
            # a folder's kustomizations, or a kustomization file's own; a plain file is
            # read alone (walking the folder it happens to sit in, /tmp or ~/Downloads,
            # cost seconds and read strangers' kustomizations)
            reached = reach(path) if reach else []
            if reached:
                root = Path(os.path.commonpath([root, *(p.resolve() for p in reached)]))
        rel = path.relative_to(root).as_posix()
        return cls(root), "" if rel == "." else rel

    def is_file(self, rel: str) -> bool:
        return not self.is_link(rel) and (self.root / rel).is_file()

    def is_link(self, rel: str) -> bool:
        try:
            repofs.check_no_link(self.root, rel)
        except (repofs.LinkRefused, PermissionError):
            return True
        return False

    def links(self, rel: str) -> list[str]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root / rel):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted([*dirnames, *filenames]):
                path = Path(dirpath) / name
                if not name.startswith(".") and path.is_symlink():
                    out.append(path.relative_to(self.root).as_posix())
        return sorted(out)

    def files(self, rel: str) -> list[str]:
        base = self.root / rel
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(n for n in filenames if not n.startswith(".")):
                if not (Path(dirpath) / name).is_symlink():  # listed by links()
                    out.append((Path(dirpath) / name).relative_to(self.root).as_posix())
        return out

    def read_text(self, rel: str) -> str:
        try:
            return _decode(repofs.read_bytes(self.root, rel, MAX_FILE_BYTES), rel)
        except repofs.LinkRefused as exc:
            raise LoadFailure(str(exc)) from None
        except OSError as exc:
            raise LoadFailure(exc.strerror or str(exc)) from None

    @contextmanager
    def materialize(self, rel: str) -> Iterator[Path]:
        yield self.root / rel


class GitTree:
    """Files of one commit, read through ``git cat-file --batch``."""

    def __init__(self, root: Path, revision: str) -> None:
        self.root = root
        self.revision = revision
        self._entries: dict[str, tuple[str, int]] = {}
        self._links: set[str] = set()
        out = _git(root, "ls-tree", "-r", "-z", "-l", "--full-tree", revision).stdout
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, sha, size = meta.split()
            if mode == SYMLINK_MODE.encode():
                self._links.add(name.decode())
            elif kind == b"blob":
                self._entries[name.decode()] = (sha.decode(), int(size))
        self._batch: Popen[bytes] | None = None
        self._extracted: Path | None = None  # the commit's files, once kustomize needs them

    @classmethod
    def at(cls, path: Path, rev: str) -> tuple[GitTree, str]:
        path = path.absolute()
        root = git_toplevel(path)
        if root is None:
            raise LoadFailure(f"{path}: --rev needs a path inside a git repository")
        proc = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        if proc.returncode != 0:
            raise LoadFailure(f"unknown revision {rev!r} in {root}")
        sha = proc.stdout.decode().strip()
        tree = cls(root, sha)
        rel = (
            path.resolve().relative_to(root.resolve()).as_posix()
            if path.exists()
            else (os.path.relpath(path, root))
        )
        rel = "" if rel == "." else rel
        if tree.is_link(rel):
            raise LoadFailure(f"{rel} is a symbolic link at {rev}: gitmedic does not follow links")
        if rel and not tree.is_file(rel) and not tree.files(rel):
            raise LoadFailure(f"{rel} does not exist at revision {rev}")
        return tree, rel

    def is_file(self, rel: str) -> bool:
        return rel in self._entries

    def is_link(self, rel: str) -> bool:
        parts = PurePosixPath(rel).parts
        return any(str(PurePosixPath(*parts[:n])) in self._links for n in range(1, len(parts) + 1))

    def links(self, rel: str) -> list[str]:
        prefix = f"{rel.rstrip('/')}/" if rel else ""
        return sorted(
            n for n in self._links if n.startswith(prefix) and not _hidden(n[len(prefix) :])
        )

    def files(self, rel: str) -> list[str]:
        prefix = f"{rel.rstrip('/')}/" if rel else ""
        return sorted(
            n for n in self._entries if n.startswith(prefix) and not _hidden(n[len(prefix) :])
        )

    def read_text(self, rel: str) -> str:
        sha, size = self._entries.get(rel, ("", 0))
        if self.is_link(rel):
            raise LoadFailure(
                f"{rel} is a symbolic link at {self.revision[:12]}: "
                "gitmedic does not follow links in the repository"
            )
        if not sha:
            raise LoadFailure(f"{rel} does not exist at {self.revision[:12]}")
        if size > MAX_FILE_BYTES:
            raise LoadFailure(f"file is {size} bytes, over the limit of {MAX_FILE_BYTES}")
        proc = self._cat_file()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after each object
        return _decode(data, rel)

    @contextmanager
    def materialize(self, rel: str) -> Iterator[Path]:
        # kustomize may reach ../base, so the whole commit is extracted: once per tree,
        # however many kustomize roots a whole-repo read renders from it.
        if self._extracted is None:
            archive = _git(self.root, "archive", "--format=tar", self.revision).stdout
            tmp = tempfile.mkdtemp(prefix="gitmedic-rev-")
            weakref.finalize(self, shutil.rmtree, tmp, ignore_errors=True)
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tmp, filter=_no_links)
            self._extracted = Path(tmp)
        yield self._extracted / rel

    def _cat_file(self) -> Popen[bytes]:
        if self._batch is None:
            self._batch = gitcmd.start(self.root, "cat-file", "--batch")
            weakref.finalize(self, _close, self._batch)
        return self._batch


def _no_links(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """The tar "data" filter, and no links at all: kustomize must not follow one."""
    if member.issym() or member.islnk():
        return None
    return tarfile.data_filter(member, dest)


def _hidden(rel: str) -> bool:
    """Hidden below the walked folder (the folder itself may be hidden: the user named it)."""
    return any(p.startswith(".") for p in PurePosixPath(rel).parts)


def _close(proc: Popen[bytes]) -> None:
    if proc.stdin:
        proc.stdin.close()
    if proc.stdout:
        proc.stdout.close()
    proc.wait(timeout=10)


def _git(root: Path, *args: str, check: bool = True) -> gitcmd.CompletedProcess[bytes]:
    proc = gitcmd.run_bytes(root, args[0], *args[1:])
    if check and proc.returncode != 0:
        raise LoadFailure(f"git {args[0]} failed: {proc.stderr.decode().strip()}")
    return proc
