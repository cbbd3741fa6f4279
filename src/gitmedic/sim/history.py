"""The sim registry from a repo's history: what ran before is what exists.

``baseline_catalog(path, rev)`` loads the desired state of the commits before
``rev`` that touched the app at ``path`` (its folder, and a Helm app's values
outside it; first parent, up to ``depth``) and collects their
images, commands and ports. ``rev`` itself is excluded so that a commit which
introduces a bad image or command is judged against what ran before it; with no
earlier commit (or no git at all) the state at ``rev`` is its own baseline.

``healthy_catalog(path, revs)`` learns only from revisions known to have run
healthy (a configured baseline, the revisions the bot verified), best first, and
from nothing between them and HEAD: a fault a few commits old, or a candidate
the bot undid, is never taken for what the images can run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.tree import LoadFailure
from gitmedic.sim.catalog import ImageCatalog


def baseline_catalog(
    path: Path,
    rev: str | None,
    *,
    namespace: str,
    current: Snapshot,
    allow: Iterable[str] = (),
    depth: int = 20,
    healthy: bool = False,
) -> ImageCatalog:
    """What ran before ``rev``; with ``healthy`` (the caller knows ``rev`` ran well, e.g.
    the revision a cluster was running), ``current`` is the first and best evidence:
    what a workload runs there is what it is expected to run, whatever a broken and
    reverted commit of the history tried."""
    earlier = _earlier(path, rev, depth, namespace)
    snapshots = [load_desired(path, rev=r, namespace=namespace).snapshot for r in earlier]
    if healthy:
        snapshots.insert(0, current)
    return ImageCatalog.from_snapshots(snapshots or [current], allow)


def healthy_catalog(
    path: Path, revs: Sequence[str], *, namespace: str, allow: Iterable[str] = ()
) -> ImageCatalog:
    """What ran in ``revs`` (each known healthy; the first is the best evidence of what a
    workload is expected to run)."""
    if not revs:
        raise ValueError("a healthy catalogue needs at least one revision")
    snapshots = [load_desired(path, rev=r, namespace=namespace).snapshot for r in revs]
    return ImageCatalog.from_snapshots(snapshots, allow)


def _earlier(path: Path, rev: str | None, depth: int, namespace: str) -> list[str]:
    where = path if path.is_dir() else path.parent
    proc = gitcmd.run(
        where,
        "log",
        "--first-parent",
        "--format=%H",
        f"-{depth + 1}",
        rev or "HEAD",
        "--",
        *_app_paths(path, namespace),
    )
    if proc.returncode != 0:
        return []
    revs = proc.stdout.split()
    if rev is None and _dirty(where):
        return revs[:depth]  # the working tree is newer than HEAD: HEAD is history
    return revs[1:]


def _app_paths(path: Path, namespace: str) -> list[str]:
    """The pathspecs whose commits change the app: its folder, and the values files and
    manifests a Helm app renders from outside it (a Flux overlay's values patch), so a
    commit that only changed those is no baseline of its own."""
    try:
        repo = ManifestRepo.open(path, namespace)
    except LoadFailure:
        return ["."]
    return [f":(top){p}" for p in repo.history_paths()] or ["."]


def _dirty(where: Path) -> bool:
    proc = gitcmd.run(where, "status", "--porcelain", "--", ".")
    return bool(proc.stdout.strip())
