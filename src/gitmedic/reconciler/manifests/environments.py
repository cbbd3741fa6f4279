"""One environment's fix never changes another's: files the other apps of the repo use.

A repo often deploys one base (or one chart's ``values.yaml``) to several
environments, each an app of ``.gitmedic/config.yaml`` (podinfo's dev, staging
and production overlays). A fix for one of them may edit a file another one
renders from only when that environment has the same fault: the field there
renders to the same value. Otherwise the edit would change an environment that
is fine, so it is refused, naming the environments, and the fix belongs in the
environment's own overlay or values file.

The other apps are rendered at the work tree (the loop's HEAD), once per
process and HEAD.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.reconciler.config import ConfigError
from gitmedic.reconciler.manifests.app_charts import tree_config
from gitmedic.reconciler.manifests.documents import same
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.paths import Path as FieldPath
from gitmedic.reconciler.manifests.paths import lookup
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure

__all__ = ["Environment", "other_environments"]


@dataclass(frozen=True)
class Environment:
    name: str
    snapshot: Snapshot
    files: frozenset[str]  # every file its objects and fields are rendered from
    deployer: str = ""  # the release it is, among others of its file (AppConfig.deployer)

    def differs(self, obj: Obj, path: FieldPath) -> bool:
        """Does ``path`` of this environment's twin of ``obj`` render to another value?"""
        twin = next((o for o in self.snapshot if _twins(o, obj)), None)
        twin = twin or next((o for o in self.snapshot if _declared_alike(o, obj)), None)
        if twin is None:
            return True
        a, b = lookup(twin.body, path), lookup(obj.body, path)
        return a[0] != b[0] or not same(a[1], b[1])


_CACHE: dict[tuple[str, str, str, str, str], tuple[Environment, ...]] = {}


def other_environments(
    root: Path, app_path: str, namespace: str, head: str, deployer: str = ""
) -> list[Environment]:
    """The repo's configured apps other than the one at ``app_path`` in ``namespace``
    (and, for a release, named ``deployer``: its neighbours in one file are others)."""
    key = (str(root), app_path, namespace, head, deployer)
    if key not in _CACHE:
        _CACHE[key] = tuple(_load(root, app_path, namespace, deployer))
    return list(_CACHE[key])


def _load(root: Path, app_path: str, namespace: str, deployer: str) -> list[Environment]:
    try:
        config = tree_config(FsTree(root))
    except (ConfigError, LoadFailure):
        return []
    out = []
    for app in config.apps if config else ():
        if (app.path, app.namespace, app.deployer) == (app_path, namespace, deployer):
            continue
        try:
            state = load_desired(root / app.path, namespace=app.namespace, deployer=app.deployer)
        except LoadFailure:
            continue
        files = _files(state.snapshot)
        out.append(Environment(app.name, state.snapshot, files, app.deployer))
    return out


def _files(snapshot: Snapshot) -> frozenset[str]:
    files: set[str] = set()
    for o in snapshot:
        if o.source is not None:
            files.add(o.source.file)
            files.update(origin.file for origin in o.source.origins)
    return frozenset(files)


def _twins(a: Obj, b: Obj) -> bool:
    """The same object in two environments: kind and name (their namespaces differ)."""
    return a.kind == b.kind and a.ref.name == b.ref.name


def _declared_alike(a: Obj, b: Obj) -> bool:
    """The same object renamed per environment (a namePrefix or nameSuffix in each
    overlay, for two environments in one namespace): one kind, declared by one document."""
    if a.kind != b.kind or a.source is None or b.source is None:
        return False
    return (a.source.file, a.source.document) == (b.source.file, b.source.document)
