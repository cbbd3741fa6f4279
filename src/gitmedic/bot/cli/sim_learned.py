"""What ``sim status`` learns its images from: the same known-good as the loop's sim.

``gitmedic run --cluster sim`` learns what images run from the app's known-good
(:mod:`gitmedic.bot.controller.known_good`: ``sim.known_good`` of the config, else the
revisions the bot verified healthy, kept in the repository's journal, else the
history before a live incident). ``sim status`` on that app's folder and namespace
reads the same, so the two show one world; for a PATH no app of the config is, or a
repository gitmedic never ran on, it is the history before REV, and it says so.
The journal is only read: ``sim status`` never creates one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gitmedic.bot.controller.known_good import KnownGood, KnownGoodError, known_good
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.config import AppConfig, ConfigError, find_config
from gitmedic.reconciler.manifests.config_file import load_config
from gitmedic.reconciler.manifests.tree import git_toplevel
from gitmedic.reconciler.transaction import Journal
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.history import baseline_catalog, healthy_catalog

__all__ = ["JOURNAL", "learned_catalog"]

JOURNAL = Path(".git") / "gitmedic" / "journal.sqlite"


def learned_catalog(
    path: Path,
    rev: str | None,
    namespace: str,
    current: Snapshot,
    allow: Sequence[str],
    deployer: str = "",
) -> tuple[ImageCatalog, str]:
    """The catalogue the loop's sim would use for the app at ``path`` (the release
    ``deployer`` there), and where it is from. ValueError when the app's configured
    known-good names no commit."""
    root = git_toplevel(path.absolute())
    app = _app(root, path, namespace, deployer) if root is not None else None
    if root is None or app is None:
        catalog = baseline_catalog(
            path, rev, namespace=namespace, current=current, allow=allow, deployer=deployer
        )
        return catalog, f"the history before {rev or 'HEAD'} ({path} is no app of its config)"
    good = _known_good(root, app)
    if good.revisions:
        catalog = healthy_catalog(
            path, good.revisions, namespace=namespace, allow=allow, deployer=deployer
        )
        return catalog, f"{good.source}, as gitmedic run learns it for app {app.name}"
    before = good.history_rev or rev
    catalog = baseline_catalog(
        path, before, namespace=namespace, current=current, allow=allow, deployer=deployer
    )
    return catalog, f"the history before {before or 'HEAD'}, as for app {app.name}"


def _app(root: Path, path: Path, namespace: str, deployer: str) -> AppConfig | None:
    config_file = find_config(root)
    if config_file is None:
        return None
    try:
        config = load_config(config_file)
    except ConfigError:
        return None  # detect and run say what is wrong with it
    rel = path.resolve().relative_to(root.resolve()).as_posix()
    rel = "" if rel == "." else rel
    found = [
        a
        for a in config.apps
        if a.path.strip("/") == rel
        and a.namespace == namespace
        and (not deployer or a.deployer == deployer)
    ]
    return found[0] if len(found) == 1 else None


def _known_good(root: Path, app: AppConfig) -> KnownGood:
    journal_file = root / JOURNAL
    if not journal_file.is_file():
        return _configured(root, app)
    try:
        return known_good(root, app.sim.known_good, Journal(journal_file), app.name)
    except KnownGoodError as exc:
        raise ValueError(f"apps[{app.name}].{exc}") from None


def _configured(root: Path, app: AppConfig) -> KnownGood:
    if not app.sim.known_good:
        return KnownGood()
    from gitmedic.bot.controller.known_good import resolve

    try:
        rev = resolve(root, app.sim.known_good)
    except KnownGoodError as exc:
        raise ValueError(f"apps[{app.name}].{exc}") from None
    return KnownGood((rev,), source=f"sim.known_good {app.sim.known_good}")
