"""Reading files of the manifest repository without ever following a symbolic link.

A committed symlink (``apps/shop/secrets.yaml -> /proc/self/environ``, a folder
linked to ``/etc``, ``.gitmedic/config.yaml -> ../.git/config``) would make any
plain ``open`` read outside the repository and hand the bot's environment or the
host's files to a model, a PR or a log. Every path is opened one component at a
time below the repository root with ``O_NOFOLLOW`` (so a link swapped in between
a check and the read is refused too), and a link anywhere on the way raises
:class:`LinkRefused`, naming the link. The root itself may be a link (``/tmp`` on
some systems); only what the repository contains is checked.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

__all__ = ["LinkRefused", "check_no_link", "read_bytes", "read_text"]


class LinkRefused(OSError):
    """A path in the repository is, or goes through, a symbolic link."""

    def __init__(self, rel: str, link: str) -> None:
        self.rel, self.link = rel, link
        what = "is a symbolic link" if rel == link else f"goes through the symbolic link {link}"
        super().__init__(f"{rel} {what}: gitmedic does not follow links in the repository")


def read_bytes(root: Path, rel: str, limit: int | None = None) -> bytes:
    """The content of the regular file ``root/rel``; :class:`LinkRefused` for any link.

    ``OSError`` (missing file, a folder, over ``limit`` bytes) otherwise.
    """
    fd = _open(root, rel)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise OSError(errno.EFBIG, f"file is {size} bytes, over the limit of {limit}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def read_text(root: Path, rel: str) -> str:
    return read_bytes(root, rel).decode("utf-8")


def check_no_link(root: Path, rel: str) -> None:
    """:class:`LinkRefused` when ``rel`` or a folder above it (below ``root``) is a link."""
    current = root
    for part in _parts(rel):
        current = current / part
        if current.is_symlink():
            raise LinkRefused(rel, current.relative_to(root).as_posix())


def _open(root: Path, rel: str) -> int:
    parts = _parts(rel)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "not a file", str(root))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    walked = ""
    try:
        for index, part in enumerate(parts):
            walked = f"{walked}/{part}" if walked else part
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | (0 if last else os.O_DIRECTORY)
            try:
                child = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
                    raise LinkRefused(rel, walked) from None
                raise
            os.close(fd)
            fd = child
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", rel)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _parts(rel: str) -> tuple[str, ...]:
    parts = tuple(p for p in PurePosixPath(rel).parts if p not in ("", "."))
    if any(p == ".." for p in parts) or PurePosixPath(rel).is_absolute():
        raise PermissionError(errno.EACCES, "not a path inside the repository", rel)
    return parts
