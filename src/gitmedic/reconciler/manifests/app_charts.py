"""How a configured Helm app renders its chart: values files in order, release, namespace.

Every reader of desired state (``detect``, the loop's bisect, gate, verification
and the sim) goes through the loader, so the loader itself looks the chart up in
the repository's ``.gitmedic/config.yaml`` *as of the revision it reads*: the
values files an app used at an old commit are the ones its config named then.
A chart no app configures renders with its own ``values.yaml`` alone.

Two apps may render one chart (prod and staging values of one chart): the app
is chosen by the namespace the loader is asked for, which is the app's own.

A repository without a config file that ``run`` or ``serve`` acts on has the apps
discovery proposed for it (as ``gitmedic init`` would write them) *adopted* for
the process (:func:`adopt_config`): every revision of that repository without a
config file is read with them, so the gate, the sim and the verification render
each discovered app's chart with its own values, as in a configured repository.
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.config import CONFIG_PATH, AppConfig, Config, ConfigError
from gitmedic.reconciler.manifests.config_file import parse_config
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree

__all__ = [
    "adopt_config",
    "adopted_config",
    "chart_spec",
    "configured_chart",
    "forget_adopted",
    "tree_config",
]

# config text -> (parsed, the files its deployed_by apps were read from, with their text):
# a revision walk reads one config often, and it is valid while those files read the same
_PARSED: dict[str, tuple[Config, dict[str, str]]] = {}
# repository root (resolved) -> the discovered apps a command acts on for it, having no
# config file: one repository per process is acted on, so the process is their scope
_ADOPTED: dict[Path, Config] = {}


def adopt_config(root: Path, config: Config) -> None:
    """Read ``root``'s revisions that have no config file with ``config``."""
    _ADOPTED[root.resolve()] = config


def adopted_config(root: Path) -> Config | None:
    return _ADOPTED.get(root.resolve()) if _ADOPTED else None


def forget_adopted() -> None:
    _ADOPTED.clear()


def chart_spec(app: AppConfig, namespace: str | None = None) -> ChartSpec | None:
    """The chart an app renders, or None for an app that is not a Helm chart."""
    if app.helm is None:
        return None
    ns = namespace or app.namespace
    return ChartSpec(app.path, app.helm.values, app.helm.release, ns, app.helm.sources)


def tree_config(tree: Tree) -> Config | None:
    """The config file of ``tree`` (a revision or the work tree); without one, the apps
    adopted for its repository (:func:`adopt_config`), else None."""
    if not tree.is_file(CONFIG_PATH):
        root = getattr(tree, "root", None)
        return adopted_config(root) if isinstance(root, Path) else None
    text = tree.read_text(CONFIG_PATH)
    cached = _PARSED.get(text)
    if cached is not None and all(_reads(tree, f, t) for f, t in cached[1].items()):
        return cached[0]
    from gitmedic.reconciler.manifests.parse import load_strict_yaml

    read: dict[str, str] = {}

    def reading(rel: str) -> str:
        read[rel] = _read(tree, rel)
        return read[rel]

    try:
        config = parse_config(load_strict_yaml(text, CONFIG_PATH), CONFIG_PATH, read=reading)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    _PARSED[text] = (config, read)
    return config


def configured_chart(tree: Tree, chart: str, namespace: str) -> ChartSpec | None:
    """The configured app rendering ``chart`` into ``namespace``, as a ChartSpec.

    Raises ConfigError for an invalid config file, and LoadFailure when two apps
    render the same chart into the same namespace (which values would be meant?).
    """
    config = tree_config(tree)
    if config is None:
        return None
    apps = [a for a in config.apps if a.helm is not None and a.path == chart]
    chosen = [a for a in apps if a.namespace == namespace]
    if len(chosen) > 1:
        names = ", ".join(a.name for a in chosen)
        raise LoadFailure(
            f"{CONFIG_PATH}: apps {names} all render chart {chart} into namespace "
            f"{namespace}; give each app its own namespace"
        )
    return chart_spec(chosen[0]) if chosen else None


def _read(tree: Tree, rel: str) -> str:
    try:
        return tree.read_text(rel)
    except LoadFailure as exc:
        raise OSError(str(exc)) from None


def _reads(tree: Tree, rel: str, text: str) -> bool:
    try:
        return _read(tree, rel) == text
    except OSError:
        return False
