"""``.gitmedic/config.yaml`` read from a repository: strict YAML, then apps filled in
from the Argo CD Application or Flux HelmRelease that deploys them.

The configuration's model and schema (:mod:`gitmedic.reconciler.config`) sit
below the manifests; reading an app ``deployed_by`` a manifest needs the manifest
readers (:mod:`.deployed_by`), so the reading lives here and hands
:func:`gitmedic.reconciler.config.parse_config` the reader of deployers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gitmedic.reconciler.config import (
    CONFIG_PATH,
    Config,
    ConfigError,
    DeployedBy,
)
from gitmedic.reconciler.config import (
    parse_config as parse_settings,
)
from gitmedic.reconciler.manifests.deployed_by import DeployerError, read_deployer
from gitmedic.reconciler.manifests.parse import load_strict_yaml
from gitmedic.reconciler.repofs import LinkRefused, read_text

# path -> (its bytes, the Config they gave): each app of a run or serve reads the config
# (its own settings, the detectors chosen), so 1,000 apps parsed it 2,000 times (O(apps^2)).
_parsed: dict[Path, tuple[str, Config]] = {}


def load_config(path: Path) -> Config:
    """The config at ``path``; parsed again only when its text changed. A config with an
    app ``deployed_by`` a manifest reads that manifest too, so it is never kept."""
    try:
        text = read_text(*_root_and_name(path))
        kept = _parsed.get(path)
        if kept is not None and kept[0] == text:
            return kept[1]
        data = load_strict_yaml(text, str(path))
    except LinkRefused as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    root, _ = _root_and_name(path)
    others: list[str] = []

    def read(rel: str) -> str:
        others.append(rel)
        return read_text(root, rel)

    try:
        config = parse_config(data, str(path), read=read)
    except ConfigError as exc:
        if not exc.problems:
            raise
        raise ConfigError(_at_lines(exc, str(path), text), exc.problems) from None
    if not others:
        _parsed[path] = (text, config)
    return config


def _at_lines(exc: ConfigError, file: str, text: str) -> str:
    """Each problem as ``file:line: location: message``, the line being that of the value
    the location names (or of the nearest enclosing one that is written)."""
    lines = [f"{file} is invalid:"]
    for where, why in exc.problems:
        shown = ".".join(f"[{p}]" if isinstance(p, int) else p for p in where) or "(top level)"
        lines.append(f"  - {file}:{config_line(text, where)}: {shown.replace('.[', '[')}: {why}")
    return "\n".join(lines)


def config_line(text: str, where: tuple[str | int, ...]) -> int:
    """The 1-based line of the node at ``where`` in the YAML ``text`` (already read strictly,
    so composing it again cannot fail on syntax)."""
    import yaml

    node = yaml.compose(text, Loader=yaml.SafeLoader)
    line = node.start_mark.line + 1 if node is not None else 1
    for part in where:
        child = _child(node, part)
        if child is None:
            break
        node, line = child, child.start_mark.line + 1
    return line


def _child(node: Any, part: str | int) -> Any:
    import yaml

    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if k.value == str(part)), None)
    return None


def parse_config(
    data: Any, source: str = CONFIG_PATH, read: Callable[[str], str] | None = None
) -> Config:
    """``read`` reads a repo-relative file (for apps ``deployed_by`` a manifest)."""
    if read is None:  # an app deployed_by a manifest is then refused
        return parse_settings(data, source)
    return parse_settings(data, source, lambda app: _deployed(app, source, read))


def _root_and_name(path: Path) -> tuple[Path, str]:
    """Where links stop being checked: the repo for ``.gitmedic/config.yaml``, else the folder."""
    if path.parent.name == ".gitmedic":
        return path.parent.parent, f".gitmedic/{path.name}"
    return path.parent, path.name


def _deployed(
    data: Mapping[str, Any], source: str, read: Callable[[str], str]
) -> Mapping[str, Any]:
    """The app's settings with path, namespace and helm read from its deployer."""
    ref = DeployedBy(**data["deployed_by"])
    where = f"{source} is invalid:\n  - apps.{data['name']}.deployed_by"
    try:
        found = read_deployer(read, ref.file, ref.name)
    except DeployerError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    given = data.get("path", "").strip("/")
    if given and given != found.path:
        raise ConfigError(f"{where}: {ref.file} deploys chart {found.path}, but path says {given}")
    namespace = data.get("namespace") or found.namespace or "default"
    if found.remote is not None:  # the loader renders it from the deployer at ``path``
        return {**data, "path": found.path, "namespace": namespace}
    helm = {**(data.get("helm") or {})}
    helm.setdefault("values", list(found.values))
    helm.setdefault("release", found.release)
    helm["sources"] = [dict(vars(s)) for s in found.sources]
    return {**data, "path": found.path, "namespace": namespace, "helm": helm}
