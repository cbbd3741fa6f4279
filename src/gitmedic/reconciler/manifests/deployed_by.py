"""An app's chart settings read from the Argo CD Application or Flux HelmRelease deploying it.

``apps[].deployed_by: {file, name}`` in ``.gitmedic/config.yaml`` names the
object; what it says fills in the app's ``path`` (the chart folder), values
files in order, release name and namespace, exactly as the GitOps engine will
render the chart:

- **Argo CD Application** (``spec.source``, or the one of ``spec.sources`` with
  a ``path``): ``path``, ``helm.valueFiles`` (relative to the path),
  ``helm.releaseName`` (default: the Application's name), destination namespace,
  and the inline values of ``spec.source.helm`` after the files, in Argo CD's
  order: ``valuesObject`` (editable in place) or else the ``values`` string (a
  fix there escalates: YAML inside a string is not edited), then ``parameters``
  (:mod:`.helm_parameters`).
- **Flux HelmRelease**, in its file or as a kustomize overlay renders it
  (``file`` names the overlay: :mod:`.deployed_kustomize`):
  ``spec.chart.spec.chart`` from a ``GitRepository``
  (a path in this repo), ``spec.chart.spec.valuesFiles`` (repo paths),
  ``valuesFrom`` ConfigMaps declared in this repo, inline ``spec.values``
  (last), ``targetNamespace`` (else the object's namespace), ``releaseName``
  (default ``[<targetNamespace>-]<name>``, as Flux names it).

A chart from a repository (a Flux ``HelmRepository`` or ``OCIRepository``
source, an Argo CD source with ``chart:`` and ``repoURL``) is named as a
:class:`ChartSource`, which :mod:`.chart_sources` resolves to the repository
the manifests declare; ``path`` is then where the deployer is read from (the
file, or the kustomize overlay's folder), and values files inside the chart's
package are refused.

The file is the repo's, so hostile input: it is read through the caller's
reader (no links followed); a ``$ref`` values file of another source and a
Secret's values are refused with the reason: gitmedic renders from this
repository and the chart repositories it declares.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

import yaml

from gitmedic.reconciler.config import ValuesSource
from gitmedic.reconciler.manifests.deployed_kustomize import (
    KUSTOMIZATIONS as KUSTOMIZATION_NAMES,
)
from gitmedic.reconciler.manifests.deployed_kustomize import (
    KustomizeReadError,
    is_kustomization,
    kustomized_release,
)
from gitmedic.reconciler.manifests.generated_values import (
    GeneratedValuesError,
    generated_values,
)
from gitmedic.reconciler.manifests.helm_parameters import parameter_problem
from gitmedic.reconciler.manifests.yaml_loader import safe_load_all_c, safe_load_c

__all__ = ["ChartSource", "Deployed", "DeployerError", "read_deployer"]

ARGO_KINDS = {("argoproj.io", "Application")}
FLUX_KINDS = {("helm.toolkit.fluxcd.io", "HelmRelease")}
REMOTE = "gitmedic renders from this repository and the chart repositories it declares"


class DeployerError(Exception):
    """The deploying object cannot be read or names what gitmedic cannot render."""


@dataclass(frozen=True)
class ChartSource:
    """A chart from a repository, as its deployer names it: Argo CD gives the URL itself,
    Flux names a source object (``kind``, ``name``, ``namespace``) holding it."""

    chart: str  # "" for a Flux OCIRepository: its URL names the chart
    version: str = ""  # a version or constraint; "": the newest
    url: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""
    file: str = ""  # the file declaring the deployer


@dataclass(frozen=True)
class Deployed:
    path: str  # the chart folder; for a chart from a repository, where the deployer is read
    values: tuple[str, ...]  # values files relative to the chart folder, in order
    release: str
    namespace: str
    sources: tuple[ValuesSource, ...] = ()
    remote: ChartSource | None = None


Reader = Callable[[str], str]


def read_deployer(read: Reader, file: str, name: str = "") -> Deployed:
    if is_kustomization(file):
        try:
            release = kustomized_release(read, _repo_path(file, "."), name)
        except KustomizeReadError as exc:
            raise DeployerError(str(exc)) from None
        found = _flux(read, release.body, release.file, release.layers)
        if found.remote is None:
            return found
        folder = PurePosixPath(file)
        if folder.name in KUSTOMIZATION_NAMES:
            folder = folder.parent
        return replace(found, path=_repo_path(str(folder), file))
    body = _document(read, file, name)
    group = str(body.get("apiVersion", "")).split("/")[0]
    kind = (group, str(body.get("kind")))
    if kind in ARGO_KINDS:
        return _argo(body, file)
    if kind in FLUX_KINDS:
        return _flux(read, body, file)
    raise DeployerError(
        f"{file}: {kind[1]} {_name(body)} is neither an Argo CD Application nor a Flux HelmRelease"
    )


def _document(read: Reader, file: str, name: str) -> dict[str, Any]:
    try:
        docs = [d for d in safe_load_all_c(read(_repo_path(file, "."))) if isinstance(d, dict)]
    except OSError as exc:
        raise DeployerError(f"{file}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise DeployerError(f"{file}: {exc}") from None
    deployers = [d for d in docs if _kind(d) in ARGO_KINDS | FLUX_KINDS]
    chosen = [d for d in deployers if not name or _name(d) == name]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        what = f"named {name!r} " if name else ""
        raise DeployerError(f"{file}: no Argo CD Application or Flux HelmRelease {what}in it")
    names = ", ".join(sorted(_name(d) for d in chosen))
    raise DeployerError(f"{file} holds {len(chosen)} ({names}): say which one with name")


def _argo(body: dict[str, Any], file: str) -> Deployed:
    spec = _map(body.get("spec"))
    sources = [_map(s) for s in spec.get("sources") or []] or [_map(spec.get("source"))]
    local = [s for s in sources if s.get("path")]
    where = f"{file}: Application {_name(body)}"
    if not local:
        charted = [s for s in sources if s.get("chart")]
        if charted:
            return _argo_chart(body, file, charted[0], where, single=not spec.get("sources"))
        raise DeployerError(f"{where} names no source path")
    source = local[0]
    path = _repo_path(str(source["path"]), where)
    helm = _map(source.get("helm"))
    values = [str(v) for v in helm.get("valueFiles") or []]
    for v in values:
        if v.startswith("$"):
            raise DeployerError(f"{where}: values file {v} comes from another source; {REMOTE}")
        if ".git" in PurePosixPath(_repo_path(f"{path}/{v}", where)).parts:
            raise DeployerError(f"{where}: values file {v} is inside .git/, git's own files")
    inline = _argo_inline(body, file, helm, where, single=not spec.get("sources"))
    namespace = str(_map(spec.get("destination")).get("namespace") or "")
    release = str(helm.get("releaseName") or _name(body))
    return Deployed(path, tuple(values), release, namespace, inline)


def _argo_chart(
    body: dict[str, Any], file: str, source: dict[str, Any], where: str, *, single: bool
) -> Deployed:
    """An Argo CD source ``chart:`` from ``repoURL`` (a repoURL without a scheme is an
    OCI registry, as Argo CD reads it)."""
    helm = _map(source.get("helm"))
    if helm.get("valueFiles"):
        raise DeployerError(
            f"{where}: values files of chart {source['chart']!r} are read from its package; "
            "gitmedic reads values from this repository only (inline them in valuesObject)"
        )
    url = str(source.get("repoURL") or "")
    if url and "://" not in url:
        url = f"oci://{url}"
    chart = ChartSource(
        str(source["chart"]), str(source.get("targetRevision") or ""), url=url, file=file
    )
    namespace = str(_map(_map(body.get("spec")).get("destination")).get("namespace") or "")
    release = str(helm.get("releaseName") or _name(body))
    inline = _argo_inline(body, file, helm, where, single=single)
    return Deployed(_repo_path(file, where), (), release, namespace, inline, chart)


def _argo_inline(
    body: dict[str, Any], file: str, helm: dict[str, Any], where: str, *, single: bool
) -> tuple[ValuesSource, ...]:
    """The Application's inline values in Argo CD's order, after the values files:
    ``valuesObject`` (which Argo CD takes instead of ``values`` when both are set), else
    the ``values`` string, then ``parameters`` (``--set``, so they win)."""
    given = [k for k in ("valuesObject", "values", "parameters") if helm.get(k)]
    if not given:
        return ()
    if not single:
        raise DeployerError(
            f"{where}: inline helm {', '.join(given)} of a source in spec.sources are not "
            "read; move them to a values file in the repo, or use spec.source"
        )
    meta = _map(body.get("metadata"))
    held = ValuesSource(file, "Application", _name(body), str(meta.get("namespace") or ""), ())
    at = ("spec", "source", "helm")
    out = []
    if helm.get("valuesObject"):
        out.append(replace(held, prefix=(*at, "valuesObject")))
    elif helm.get("values"):
        out.append(replace(held, prefix=(*at, "values"), editable=False))
    if helm.get("parameters"):
        problem = parameter_problem(helm["parameters"])
        if problem:
            raise DeployerError(f"{where}: {problem}; move it to a values file in the repo")
        out.append(replace(held, prefix=(*at, "parameters"), parameters=True))
    return tuple(out)


def _flux(
    read: Reader, body: dict[str, Any], file: str, layers: Sequence[tuple[str, str]] | None = None
) -> Deployed:
    """``layers``: the files whose ``spec.values`` make the release's, in order, with the
    namespace each declares it in (a kustomize overlay's base and patches); else ``file``."""
    spec = _map(body.get("spec"))
    where = f"{file}: HelmRelease {_name(body)}"
    meta = _map(body.get("metadata"))
    remote = _flux_remote(spec, str(meta.get("namespace") or ""), file, where)
    chart = _map(_map(spec.get("chart")).get("spec"))
    if remote is None:
        path = _repo_path(str(chart.get("chart") or ""), where)
        values = [_relative(_repo_path(str(v), where), path) for v in _list(chart, "valuesFiles")]
    else:
        path, values = _repo_path(file, where), []
    own_ns = str(meta.get("namespace") or "")
    target = str(spec.get("targetNamespace") or "")
    release = str(spec.get("releaseName") or (f"{target}-" if target else "") + _name(body))
    sources = [
        _values_from(read, file, own_ns, _map(v), where) for v in spec.get("valuesFrom") or []
    ]
    if layers is None:
        layers = [(file, own_ns)] if "values" in spec else []
    sources += [
        ValuesSource(f, "HelmRelease", _name(body), ns, ("spec", "values")) for f, ns in layers
    ]
    return Deployed(path, tuple(values), release, target or own_ns, tuple(sources), remote)


def _flux_remote(spec: dict[str, Any], own_ns: str, file: str, where: str) -> ChartSource | None:
    """The chart's source when it is a repository (None: a GitRepository, this repo)."""
    if spec.get("chartRef"):
        ref = _map(spec.get("chartRef"))
        kind = str(ref.get("kind") or "")
        if kind != "OCIRepository":
            raise DeployerError(f"{where} takes its chart from {kind or 'no'} chartRef; {REMOTE}")
        namespace = str(ref.get("namespace") or own_ns)
        return ChartSource("", kind=kind, name=str(ref.get("name")), namespace=namespace, file=file)
    chart = _map(_map(spec.get("chart")).get("spec"))
    ref = _map(chart.get("sourceRef"))
    kind = str(ref.get("kind") or "")
    if kind == "GitRepository":
        return None
    if kind != "HelmRepository":
        raise DeployerError(
            f"{where} takes chart {chart.get('chart')!r} from a {kind or 'missing'} source; "
            f"{REMOTE} (a GitRepository, a HelmRepository or an OCIRepository)"
        )
    if chart.get("valuesFiles"):
        raise DeployerError(
            f"{where}: valuesFiles of chart {chart.get('chart')!r} are read from its package; "
            "gitmedic reads values from this repository only (use spec.values)"
        )
    version = str(chart.get("version") or "")
    return ChartSource(
        str(chart.get("chart") or ""),
        "" if version == "*" else version,
        kind=kind,
        name=str(ref.get("name")),
        namespace=str(ref.get("namespace") or own_ns),
        file=file,
    )


def _values_from(
    read: Reader, file: str, namespace: str, ref: dict[str, Any], where: str
) -> ValuesSource:
    kind, name = str(ref.get("kind")), str(ref.get("name"))
    if kind != "ConfigMap":
        raise DeployerError(f"{where}: valuesFrom {kind} {name} holds values not kept in Git")
    if ref.get("targetPath"):
        raise DeployerError(f"{where}: valuesFrom {name} with targetPath is not read")
    key = str(ref.get("valuesKey") or "values.yaml")
    folder = str(PurePosixPath(file).parent)
    kustomization = _kustomization(read, folder)
    for candidate in _yaml_files(kustomization, folder):
        if _declares(read, candidate, "ConfigMap", name, key):
            return ValuesSource(candidate, "ConfigMap", name, namespace, ("data", key), False)
    try:
        generated = generated_values(kustomization, name, key)
    except GeneratedValuesError as exc:
        raise DeployerError(f"{where}: valuesFrom {exc}") from None
    if generated is not None:  # the generator's file is the values, whole
        return ValuesSource(_join(folder, generated), "ConfigMap", name, namespace, ())
    raise DeployerError(
        f"{where}: valuesFrom ConfigMap {name} (key {key}) is not declared in {folder}/; "
        "gitmedic would render without it"
    )


def _kustomization(read: Reader, folder: str) -> dict[str, Any]:
    """The HelmRelease's folder's kustomization ({} when it has none or it is unreadable)."""
    for name in ("kustomization.yaml", "kustomization.yml"):
        try:
            return _map(safe_load_c(read(_join(folder, name))))
        except (OSError, yaml.YAMLError, ValueError):
            continue
    return {}


def _yaml_files(kustomization: dict[str, Any], folder: str) -> list[str]:
    """The YAML files beside the HelmRelease, as named by its folder's kustomization."""
    resources = kustomization.get("resources") or []
    return [_join(folder, str(r)) for r in resources if str(r).endswith((".yaml", ".yml"))]


def _declares(read: Reader, file: str, kind: str, name: str, key: str) -> bool:
    try:
        docs = safe_load_all_c(read(file))
    except (OSError, yaml.YAMLError, ValueError):
        return False
    found = [d for d in docs if isinstance(d, dict) and d.get("kind") == kind]
    return any(_name(d) == name and key in _map(d.get("data")) for d in found)


def _repo_path(rel: str, where: str) -> str:
    """A repo-relative path (``./charts/x`` -> ``charts/x``); one leaving the repo is refused."""
    parts: list[str] = []
    for part in PurePosixPath(rel).parts:
        if part == "/" or (part == ".." and not parts):
            raise DeployerError(f"{where}: {rel} is outside the repository")
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _relative(file: str, folder: str) -> str:
    """``file`` relative to ``folder`` (both repo-relative), with ``..`` where needed."""
    a, b = PurePosixPath(file).parts, PurePosixPath(folder).parts
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return "/".join([".."] * (len(b) - common) + list(a[common:]))


def _join(folder: str, rel: str) -> str:
    return _repo_path(str(PurePosixPath(folder, rel)), folder)


def _kind(body: dict[str, Any]) -> tuple[str, str]:
    return str(body.get("apiVersion", "")).split("/")[0], str(body.get("kind"))


def _name(body: dict[str, Any]) -> str:
    return str(_map(body.get("metadata")).get("name") or "")


def _list(spec: dict[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
