"""The values a commit changed behind a field its chart's template writes.

A template often writes a field only when a value asks for it::

    {{ if .Values.spec.karpenterInstanceProfile }}
    nodeSelector: {type: karpenter}
    {{ end }}

The field holds no value (:mod:`.rendered` refuses to edit the template), yet the
commit that brought it changed only a values key. Undoing *that commit's change
to the app's own values files* is then the fix: this module computes those edits
(each changed key put back as the commit's parent had it). The caller proves it
by rendering again: the field must read as it did at the parent. A values file
another environment renders with is refused, so no other environment changes: a
steering key shows in no rendered field, so any other app whose chart takes the file
(its configured values files) is one it would change.
"""

from __future__ import annotations

from typing import Any

import yaml

from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.config import ConfigError
from gitmedic.reconciler.manifests.app_charts import chart_spec, configured_chart, tree_config
from gitmedic.reconciler.manifests.documents import EditError, values_ref
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.history import restore_fields
from gitmedic.reconciler.manifests.paths import Path
from gitmedic.reconciler.manifests.rendered import NotEditable, own_environment
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure

__all__ = ["values_changed_by"]


def values_changed_by(
    repo: ManifestRepo, obj: Obj, field: Path, commit: str, parent: str
) -> list[Edit]:
    """Edits undoing ``commit``'s changes to the values files ``obj``'s chart renders with
    (the app's own, as configured now); [] when it changed none."""
    if obj.source is None or obj.source.renderer != "helm":
        return []
    try:
        spec = configured_chart(FsTree(repo.root), repo.path, repo.namespace)
    except (ConfigError, LoadFailure) as exc:
        raise EditError(str(exc)) from None
    own = f"{repo.path}/values.yaml" if repo.path else "values.yaml"
    files = spec.values_files() if spec is not None else [own]
    edits: list[Edit] = []
    for file in files:
        keys = _changed_keys(_values(repo, file, parent), _values(repo, file, commit))
        if not keys:
            continue
        _only_this_app_takes(repo, file)
        own_environment(repo, obj, field, [file])
        edits += restore_fields(repo, values_ref(file), keys, parent, file)
    return edits


def _only_this_app_takes(repo: ManifestRepo, file: str) -> None:
    try:
        config = tree_config(FsTree(repo.root))
    except (ConfigError, LoadFailure) as exc:
        raise EditError(str(exc)) from None
    others = [
        app.name
        for app in (config.apps if config else ())
        if (app.path, app.namespace) != (repo.path, repo.namespace)
        and (spec := chart_spec(app)) is not None
        and file in spec.values_files()
    ]
    if others:
        raise NotEditable(
            f"{file} is also a values file of {', '.join(others)}: undoing a change there "
            "would change them too; fix it in this environment's own values file"
        )


def _values(repo: ManifestRepo, file: str, rev: str) -> Any:
    if not repo.exists(file, rev):
        return {}  # the file did not exist then
    try:
        return yaml.safe_load(repo.read(file, rev)) or {}
    except yaml.YAMLError as exc:
        raise NotEditable(f"{file} at {rev[:12]} is no YAML: {exc}") from None


def _changed_keys(old: Any, new: Any, at: tuple[str, ...] = ()) -> list[Path]:
    """The deepest keys whose values differ (a list is one value: helm replaces lists)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Path] = []
        for key in [*old, *(k for k in new if k not in old)]:
            if key not in old or key not in new:
                out.append((*at, str(key)))
            else:
                out += _changed_keys(old[key], new[key], (*at, str(key)))
        return out
    return [] if old == new else [at]
