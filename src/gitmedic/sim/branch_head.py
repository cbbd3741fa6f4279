"""The tip of the branch a sim's engine tracks, asked of git once per change of the refs.

Each step of a sim asks its :class:`~gitmedic.sim.engine.GitSource` for the head of the
tracked branch (Argo CD's poll of the repository), and each app has its own sim: with
20 apps of one repository, forking git two or three times per app per step was most
of ``run --once``'s time, and with 1,000 apps most of a monitor tick. The answer changes
only when a file git reads to give it changes, so it is kept per (git directory,
branch) beside a signature of those files, and git is asked again when the signature
differs:

- ``HEAD`` of the git directory (its bytes: the branch checked out, the last fallback);
- the loose ref file of each candidate branch (its bytes: git writes a ref by renaming
  a new file into place, whose content is the new object id), absent or not;
- ``packed-refs`` (size, mtime, ctime and inode): what git itself checks before it
  trusts its cached copy of that file (``stat_validity_check``).

The signature is taken before git is asked, so a ref that moves in between is asked
about again at the next read. A repository whose refs are not files (the reftable
backend) or a loose ref that is symbolic is asked every time: nothing here guesses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from gitmedic.reconciler import gitcmd

__all__ = ["HEADS", "BranchHeads"]

Signature = tuple[object, ...]


class BranchHeads:
    """A cache of branch heads, shared by every sim of the process."""

    def __init__(self) -> None:
        self._dirs: dict[Path, tuple[Path, Path] | None] = {}
        self._heads: dict[tuple[Path, tuple[str, ...]], tuple[Signature, str]] = {}
        self._lock = threading.Lock()  # serve's monitor and a command may both read
        self.asked = 0  # how many times git was asked (what the cache saves is tested)

    def read(self, where: Path, candidates: tuple[str, ...], ask: Callable[[], str]) -> str:
        """``ask()`` (git's answer for the branches ``candidates`` names, in order), or the
        answer it gave last while the files it depends on are unchanged. What ``ask``
        raises is raised and nothing is kept."""
        dirs = self._git_dirs(where)
        signature = _signature(dirs, candidates) if dirs is not None else None
        if dirs is None or signature is None:
            self.asked += 1
            return ask()
        key = (dirs[1], candidates)
        with self._lock:
            kept = self._heads.get(key)
        if kept is not None and kept[0] == signature:
            return kept[1]
        self.asked += 1
        head = ask()
        with self._lock:
            self._heads[key] = (signature, head)
        return head

    def _git_dirs(self, where: Path) -> tuple[Path, Path] | None:
        """(git directory, common directory) of the repository ``where`` is in; None
        when git cannot say (then nothing is kept)."""
        if where in self._dirs:
            return self._dirs[where]
        proc = gitcmd.run(where, "rev-parse", "--absolute-git-dir", "--git-common-dir")
        lines = proc.stdout.splitlines() if proc.returncode == 0 else []
        found = None
        if len(lines) == 2:
            git_dir = Path(lines[0])
            common = Path(lines[1])
            common = common if common.is_absolute() else (where / common)
            found = (git_dir, common.resolve())
        self._dirs[where] = found
        return found


def _signature(dirs: tuple[Path, Path], candidates: tuple[str, ...]) -> Signature | None:
    git_dir, common = dirs
    if (common / "reftable").exists():
        return None
    parts: list[object] = [_bytes(git_dir / "HEAD")]
    for branch in candidates:
        loose = _bytes(common / "refs" / "heads" / branch)
        if loose is not None and loose.startswith(b"ref:"):
            return None
        parts.append(loose)
    try:
        packed = (common / "packed-refs").stat()
    except FileNotFoundError:
        parts.append(None)
    else:
        parts.append((packed.st_size, packed.st_mtime_ns, packed.st_ctime_ns, packed.st_ino))
    return tuple(parts)


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


HEADS = BranchHeads()
