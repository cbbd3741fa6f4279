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

Both add the registry (:mod:`gitmedic.sim.registry`): every image the repository
names in the history up to the revisions taken as having run (``rev``'s earlier
app commit, or the healthy ones), and outside the app's paths after them; so
``sim status`` and the loop pull from the same registry. Both add, too, which
Secrets and ConfigMaps any commit up to ``rev`` (or HEAD) defined
(:mod:`gitmedic.sim.defined`): one the baseline read and no commit ever defined
is made at runtime.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.defined import DefinedObjects, defined_objects
from gitmedic.sim.registry import KnownImages, known_images


def baseline_catalog(
    path: Path,
    rev: str | None,
    *,
    namespace: str,
    current: Snapshot,
    allow: Iterable[str] = (),
    depth: int = 20,
    healthy: bool = False,
    deployer: str = "",
) -> ImageCatalog:
    """What ran before ``rev``; with ``healthy`` (the caller knows ``rev`` ran well, e.g.
    the revision a cluster was running), ``current`` is the first and best evidence:
    what a workload runs there is what it is expected to run, whatever a broken and
    reverted commit of the history tried."""
    earlier = _earlier(path, rev, depth, namespace)
    helm = _current_chart(path, namespace)
    snapshots = [_desired(path, r, namespace, helm, deployer) for r in earlier]
    if healthy:
        snapshots.insert(0, current)
    # the registry: the history up to the newest revision taken as having run
    base = [rev or "HEAD"] if healthy or not earlier else earlier[:1]
    baseline = snapshots or [current]
    catalog = ImageCatalog.from_snapshots(baseline, allow)
    defined = _defined(path, rev).with_baseline(baseline)
    return catalog.with_registry(_registry(path, base, rev, namespace)).with_defined(defined)


def healthy_catalog(
    path: Path,
    revs: Sequence[str],
    *,
    namespace: str,
    allow: Iterable[str] = (),
    deployer: str = "",
) -> ImageCatalog:
    """What ran in ``revs`` (each known healthy; the first is the best evidence of what a
    workload is expected to run)."""
    if not revs:
        raise ValueError("a healthy catalogue needs at least one revision")
    helm = _current_chart(path, namespace)
    snapshots = [_desired(path, r, namespace, helm, deployer) for r in revs]
    catalog = ImageCatalog.from_snapshots(snapshots, allow)
    defined = _defined(path, None).with_baseline(snapshots)
    return catalog.with_registry(_registry(path, revs, None, namespace)).with_defined(defined)


def _desired(
    path: Path, rev: str, namespace: str, helm: Mapping[str, ChartSpec], deployer: str
) -> Snapshot:
    """The app at ``rev`` as it is configured now: a chart rendered with the values files
    the app names today, even at a commit before ``.gitmedic/config.yaml`` named them
    (else its ``values.yaml`` alone: another environment, taken for this one's past).
    Where those files did not exist yet, the chart as that commit configured it.
    ``deployer``: the app is that one release at ``path``, its neighbours none of its past."""
    if helm:
        state = load_desired(path, rev=rev, namespace=namespace, helm=helm, deployer=deployer)
        if not state.errors:
            return state.snapshot
    return load_desired(path, rev=rev, namespace=namespace, deployer=deployer).snapshot


def _current_chart(path: Path, namespace: str) -> dict[str, ChartSpec]:
    """The chart folder of the app at ``path`` -> how the current config renders it."""
    from gitmedic.reconciler.config import ConfigError
    from gitmedic.reconciler.manifests.app_charts import configured_chart

    try:
        repo = ManifestRepo.open(path, namespace)
        spec = configured_chart(FsTree(repo.root), repo.path, namespace)
    except (ConfigError, LoadFailure):
        return {}
    return {repo.path: spec} if spec is not None else {}


def _registry(path: Path, base: Sequence[str], head: str | None, namespace: str) -> KnownImages:
    """Every image the repository names up to ``base``, and outside the app up to ``head``."""
    where = path if path.is_dir() else path.parent
    return known_images(where, base, head, _app_paths(path, namespace))


def _defined(path: Path, head: str | None) -> DefinedObjects:
    """The Secrets and ConfigMaps any commit up to ``head`` defined (read when needed)."""
    return defined_objects(path if path.is_dir() else path.parent, head)


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
