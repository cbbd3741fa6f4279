"""The few git plumbing calls LocalForge needs (argument lists, never a shell).

Merges and reverts are computed with ``git merge-tree --write-tree`` and
``commit-tree`` (git >= 2.38): they write objects only, never a work tree or an
index, so a failed or conflicting operation leaves the repository exactly as it
was, and a work tree with uncommitted changes is never touched. Refs then move
with compare-and-swap ``update-ref``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.forge import ServerError
from gitmedic.reconciler.git import SYMLINK_MODE

ZERO_OLD = ""  # update-ref's "the ref must not exist yet"


class GitFailed(ServerError):
    """git failed where it should not: the local forge's own "server error"."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} failed ({returncode}): {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def env(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }


@dataclass(frozen=True)
class MergeResult:
    tree: str
    conflicts: tuple[str, ...]  # paths; empty when the merge is clean


def run(
    repo: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    input: str | None = None,
) -> gitcmd.CompletedProcess[str]:
    proc = gitcmd.run(repo, args[0], *args[1:], env=env, input=input)
    if check and proc.returncode != 0:
        raise GitFailed(args, proc.returncode, proc.stderr)
    return proc


def out(repo: Path, *args: str) -> str:
    return run(repo, *args).stdout.strip()


def common_dir(path: Path) -> Path:
    """The repository's shared git directory (``.git`` of the main work tree)."""
    start = path if path.is_dir() else path.parent
    return Path(out(start, "rev-parse", "--path-format=absolute", "--git-common-dir"))


def resolve(repo: Path, rev: str) -> str | None:
    proc = run(
        repo,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def branch_sha(repo: Path, branch: str) -> str | None:
    return resolve(repo, f"refs/heads/{branch}")


def tree_of(repo: Path, commit: str) -> str:
    return out(repo, "rev-parse", f"{commit}^{{tree}}")


def parents(repo: Path, commit: str) -> tuple[str, ...]:
    return tuple(out(repo, "rev-list", "--parents", "-n1", commit).split()[1:])


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    proc = run(repo, "merge-base", "--is-ancestor", ancestor, descendant, check=False)
    return proc.returncode == 0


@dataclass(frozen=True)
class Refs:
    """Branch tips, and the branches each base already contains, read in bulk.

    Two ``for-each-ref`` calls answer "where is every PR's head, and which heads
    reached their base" for any number of PRs.
    """

    tips: Mapping[str, str]
    contained: Mapping[str, frozenset[str]]

    @classmethod
    def read(cls, repo: Path, bases: Iterable[str]) -> Refs:
        fmt = "--format=%(objectname) %(refname:strip=2)"
        lines = out(repo, "for-each-ref", fmt, "refs/heads").splitlines()
        tips = {name: sha for sha, name in (line.split(" ", 1) for line in lines)}
        contained = {
            base: frozenset(
                out(
                    repo,
                    "for-each-ref",
                    "--format=%(refname:strip=2)",
                    f"--merged=refs/heads/{base}",
                    "refs/heads",
                ).split()
            )
            for base in set(bases)
            if base in tips
        }
        return cls(tips, contained)


def symlinks_in(repo: Path, commit: str, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (or a folder above one) that are symbolic links in ``commit``."""
    wanted = {str(prefix) for p in paths for prefix in _with_parents(PurePosixPath(p))}
    if not wanted:
        return []
    listing = run(repo, "ls-tree", "-z", commit, "--", *sorted(wanted)).stdout
    return sorted(
        name
        for meta, _, name in (r.partition("\t") for r in listing.split("\0") if r)
        if meta.startswith(f"{SYMLINK_MODE} ")
    )


def _with_parents(path: PurePosixPath) -> list[PurePosixPath]:
    return [path, *(p for p in path.parents if p.parts)]


def valid_branch_name(repo: Path, branch: str) -> bool:
    return run(repo, "check-ref-format", "--branch", branch, check=False).returncode == 0


def merge_tree(repo: Path, ours: str, theirs: str) -> MergeResult:
    proc = run(
        repo,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        ours,
        theirs,
        check=False,
    )
    if proc.returncode not in (0, 1):
        raise GitFailed(("merge-tree", ours, theirs), proc.returncode, proc.stderr)
    lines = proc.stdout.splitlines()
    return MergeResult(lines[0], tuple(sorted({p for p in lines[1:] if p})))


def commit_tree(
    repo: Path, tree: str, parent_shas: Sequence[str], message: str, who: Identity
) -> str:
    args = ["commit-tree", tree, "-m", message]
    for parent in parent_shas:
        args += ["-p", parent]
    return out_env(repo, args, who.env())


def out_env(repo: Path, args: Sequence[str], env: dict[str, str]) -> str:
    return run(repo, *args, env=env).stdout.strip()


def update_ref(repo: Path, ref: str, new: str, old: str | None, reason: str) -> bool:
    """Move ``ref`` to ``new`` if it is still at ``old`` (``None``: whatever it is)."""
    args = ["update-ref", "-m", reason, ref, new] + ([] if old is None else [old])
    return run(repo, *args, check=False).returncode == 0


def delete_ref(repo: Path, ref: str) -> None:
    run(repo, "update-ref", "-d", ref)


def worktree_of(repo: Path, branch: str) -> Path | None:
    """The work tree that has ``branch`` checked out, if any (bare repos have none)."""
    current: Path | None = None
    for line in out(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = Path(line.removeprefix("worktree "))
        elif line == f"branch refs/heads/{branch}" and current is not None:
            return current
    return None


def fast_forward_worktree(worktree: Path, target: str) -> bool:
    """Fast-forward the checked-out branch, keeping unrelated uncommitted changes.

    ``False`` (nothing changed) when local changes touch the files that would move.
    """
    proc = run(worktree, "merge", "--ff-only", "-q", "--no-stat", target, check=False)
    return proc.returncode == 0


def merged_by(repo: Path, head: str, base_tip: str) -> str:
    """The commit on ``base_tip``'s first-parent chain that brought ``head`` in.

    A merge commit when the PR was merged with one; ``head`` itself when it was
    fast-forwarded onto the base.
    """
    later = out(
        repo, "rev-list", "--first-parent", "--ancestry-path", "--reverse", f"{head}..{base_tip}"
    ).split()
    if not later or parents(repo, later[0])[0] == head:
        return head
    return later[0]


def default_branch(repo: Path) -> str:
    proc = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return proc.stdout.strip() if proc.returncode == 0 else "main"
