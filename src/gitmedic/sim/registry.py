"""The sim's registry: every image any commit of the repository names exists.

The sim cannot ask a registry whether ``repo:tag`` was pushed. Guessing from what
one app ran turned images the team uses elsewhere into pull failures (a service
pinned to the image the repo's own ``release/`` manifests deploy; a chart's
``redis:8.8.0``, in the repo since its first commit), and gitmedic reverted
correct changes for it. So the registry knows, as :class:`KnownImages`:

- every image named in any file of any commit up to the ``base`` revisions (the
  revisions the sim takes as having run: a known-good, or the commit before the
  app's newest change), read raw (:mod:`gitmedic.sim.image_refs`: manifests,
  values files, kustomize ``images:``), whatever path it sits in;
- every image that a later commit (up to ``head``) wrote outside the app's own
  paths: a new release elsewhere in the repo exists as soon as it is committed.

What the app's own later commits introduce is what the sim judges, so it is not
taken as evidence: a tag a bad commit names and no other commit ever named still
fails to pull, and the fault is still seen. Docker Hub's spellings of one image
(``redis:8``, ``docker.io/redis:8``, ``docker.io/library/redis:8``) are one
image (:func:`canonical`). The result is computed once per commit set and kept
for the process (``sim status`` and each app's loop ask for the same sets), and the
history up to ``base``, the same for every app of a repository, is read once for
all of them (each app's own part is what was written since, outside it); a
registry learns again when the sim deploys a new HEAD (:meth:`KnownImages.at_head`),
so a long-running ``serve`` knows the images committed since it started.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import IO

from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.manifests.tree import LoadFailure, git_toplevel
from gitmedic.sim.image_refs import Parts, references

MAX_BLOB_BYTES = 4 * 1024 * 1024  # a file version bigger than this is not read for images
_SUFFIXES = (".yaml", ".yml", ".json")
_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def canonical(image: str) -> str:
    """One spelling per image: Docker Hub's host and ``library/`` dropped, ``:latest`` added."""
    ref = image.strip()
    for host in _HUB:
        if ref.startswith(host):
            ref = ref[len(host) :]
            break
    ref = ref.removeprefix("library/")
    last = ref.rsplit("/", 1)[-1]
    return ref if ("@" in ref or ":" in last) else f"{ref}:latest"


@dataclass(frozen=True)
class KnownImages:
    """The images the sim's registry holds: full references (canonical), and the
    repositories of values maps with the tags each may take (see image_refs)."""

    images: frozenset[str] = frozenset()
    repository_keys: Mapping[str, frozenset[str]] = field(default_factory=dict)
    key_tags: Mapping[str, frozenset[str]] = field(default_factory=dict)
    blobs: int = 0  # file versions read to learn them (for people and tests)
    # what it was learned from, so a new HEAD learns again (:meth:`at_head`)
    where: Path | None = None
    base: tuple[str, ...] = ()
    app_paths: tuple[str, ...] = ()
    head: str = ""

    def at_head(self, head: str) -> KnownImages:
        """The registry as of ``head``: what commits since the one it was learned at wrote
        outside the app exists now (a release committed while ``serve`` runs). Itself when
        ``head`` is the same commit or names none (a working tree, a revision in memory)."""
        if self.where is None or not self.base:
            return self
        tip = _commit(self.where, head)
        if not tip or tip == self.head:
            return self
        return _known(self.where, self.base, tip, self.app_paths)

    def knows(self, image: str) -> bool:
        ref = canonical(image)
        if ref in self.images:
            return True
        name = ref.split("@", 1)[0]
        repo, colon, tag = name.rpartition(":")
        if not colon or "/" in tag:
            return False
        keys = self.repository_keys.get(repo, frozenset())
        return any(tag in self.key_tags.get(key, frozenset()) for key in keys)

    @classmethod
    def of(cls, images: Iterable[str], blobs: int = 0) -> KnownImages:
        return cls(frozenset(_spellings(images)), blobs=blobs)

    @classmethod
    def from_parts(cls, parts: Parts, blobs: int) -> KnownImages:
        keys: dict[str, set[str]] = defaultdict(set)
        for repo, named in parts.repository_keys().items():
            keys[canonical_repository(repo)] |= named
        return cls(
            frozenset(_spellings(parts.references())),
            {repo: frozenset(k) for repo, k in keys.items()},
            {key: frozenset(tags) for key, tags in parts.tags_by_key().items()},
            blobs,
        )


def canonical_repository(repo: str) -> str:
    return canonical(f"{repo}:_").removesuffix(":_")


def _spellings(images: Iterable[str]) -> set[str]:
    """Canonical references; ``name:tag@digest`` pulls by either, so both are added."""
    out: set[str] = set()
    for image in images:
        ref = canonical(image)
        out.add(ref)
        name, at, digest = ref.partition("@")
        if at and ":" in name.rsplit("/", 1)[-1]:
            out |= {name, f"{name.rpartition(':')[0]}@{digest}"}
    return out


def known_images(
    where: Path, base: Sequence[str], head: str | None, app_paths: Sequence[str]
) -> KnownImages:
    """What the repository at ``where`` names up to ``base``, and outside ``app_paths``
    (``:(top)`` pathspecs) up to ``head``. Outside a git repository: nothing."""
    shas = tuple(sha for sha in (_commit(where, rev) for rev in base) if sha)
    if not shas:
        return KnownImages()
    tip = _commit(where, head or "HEAD") or shas[0]
    root = git_toplevel(where)
    return _known(root.resolve() if root else where.resolve(), shas, tip, tuple(app_paths))


@lru_cache(maxsize=32)
def _known(
    where: Path, base: tuple[str, ...], head: str, app_paths: tuple[str, ...]
) -> KnownImages:
    reachable, shared = _reachable(where, base)
    later = _written_outside(where, base, head, app_paths)
    blobs = reachable | later
    parts = Parts()
    if _first_paths(blobs).items() >= _first_paths(reachable).items():
        # The history up to ``base`` is every app's, read once (:func:`_reachable`);
        # only what was written since, outside this app, is read for it.
        parts.merge(shared)
        old = {sha for sha, _ in reachable}
        _read_into(parts, where, {(sha, path) for sha, path in later if sha not in old})
    else:  # a later path of an old blob sorts first: read as one set, as before
        _read_into(parts, where, blobs)
    known = KnownImages.from_parts(parts, len({sha for sha, _ in blobs}))
    return replace(known, where=where, base=base, app_paths=app_paths, head=head)


@lru_cache(maxsize=8)
def _reachable(where: Path, base: tuple[str, ...]) -> tuple[frozenset[tuple[str, str]], Parts]:
    """The file versions up to ``base`` and what they name: the same for every app whose
    sim learns from those revisions (all of a repository's, usually), so kept."""
    blobs = frozenset(reachable_blobs(where, base))
    parts = Parts()
    _read_into(parts, where, blobs)
    return blobs, parts


def _read_into(parts: Parts, where: Path, blobs: Iterable[tuple[str, str]]) -> None:
    for path, text in read_blobs(where, set(blobs)):
        parts.merge(references(path, text))


def _first_paths(blobs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The path each distinct blob is read under (:func:`read_blobs`: the first, sorted)."""
    first: dict[str, str] = {}
    for sha, path in sorted(blobs):
        first.setdefault(sha, path)
    return first


def _commit(where: Path, rev: str) -> str:
    proc = gitcmd.run(where, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    return proc.stdout.strip() if proc.returncode == 0 else ""


def reachable_blobs(where: Path, base: tuple[str, ...]) -> set[tuple[str, str]]:
    """(blob, path) of every manifest-like file version in the trees up to ``base``."""
    proc = gitcmd.run(where, "rev-list", "--objects", *base)
    if proc.returncode != 0:
        raise RegistryError(f"git rev-list in {where}: {proc.stderr.strip()}")
    out: set[tuple[str, str]] = set()
    for line in proc.stdout.splitlines():
        sha, _, path = line.partition(" ")
        if path.endswith(_SUFFIXES):
            out.add((sha, path))
    return out


def _written_outside(
    where: Path, base: tuple[str, ...], head: str, app_paths: tuple[str, ...]
) -> set[tuple[str, str]]:
    """(blob, path) of the file versions commits after ``base`` wrote outside the app."""
    top = ":(top)"
    excluded = [p.replace(top, ":(top,exclude)", 1) for p in app_paths if p.startswith(top)]
    if not excluded or len(excluded) != len(app_paths):
        return set()  # the app's paths are unknown: nothing later is safely outside it
    args = ["--format=", "--raw", "--no-abbrev", "--no-renames", head, "--not", *base]
    proc = gitcmd.run(where, "log", *args, "--", ":(top)", *excluded)
    if proc.returncode != 0:
        raise RegistryError(f"git log in {where}: {proc.stderr.strip()}")
    out: set[tuple[str, str]] = set()
    for line in proc.stdout.splitlines():
        meta, _, path = line.partition("\t")
        fields = meta.split()
        if len(fields) == 5 and path.endswith(_SUFFIXES) and set(fields[3]) != {"0"}:
            out.add((fields[3], path))
    return out


def read_blobs(
    where: Path, blobs: set[tuple[str, str]], mentions: re.Pattern[bytes] | None = None
) -> Iterable[tuple[str, str]]:
    """(path, text) of each distinct blob, read through one ``cat-file --batch``; with
    ``mentions``, only the blobs whose bytes match it (the rest are read past)."""
    first_path: dict[str, str] = {}
    for sha, path in sorted(blobs):
        first_path.setdefault(sha, path)
    if not first_path:
        return
    proc = gitcmd.start(where, "cat-file", "--batch")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha, path in first_path.items():
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing": a pruned or shallow history
                continue
            size = int(header[2])
            if header[1] != b"blob" or size > MAX_BLOB_BYTES:
                _skip(proc.stdout, size + 1)
                continue
            data = proc.stdout.read(size + 1)[:-1]  # the content, then a newline
            if mentions is not None and not mentions.search(data):
                continue
            yield path, data.decode("utf-8", errors="replace")
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()


def _skip(stream: IO[bytes], size: int) -> None:
    """Read past ``size`` bytes without keeping them (a file version too big to read)."""
    while size > 0:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:
            return
        size -= len(chunk)


class RegistryError(LoadFailure):
    """git could not list the repository's history (the registry cannot be built)."""
