"""A Helm app's desired state: its rendered objects, each at its template and values lines."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path, PurePosixPath

import yaml

from gitmedic.detectors.snapshot import Source
from gitmedic.reconciler.manifests.chart_pull import pull_chart
from gitmedic.reconciler.manifests.helm import (
    ChartSpec,
    HelmError,
    helm_template,
    remote_dependencies,
)
from gitmedic.reconciler.manifests.helm_trace import (
    Marked,
    ValuesLayer,
    field_origins,
    mark,
    merge,
    owning_layers,
    read_layer,
    read_source_layer,
)
from gitmedic.reconciler.manifests.kustomize import Rendered, RenderedObject
from gitmedic.reconciler.manifests.parse import ManifestError, parse_text
from gitmedic.reconciler.manifests.render_caps import RenderCapError, count_documents, render_caps
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree

_SOURCE = re.compile(r"^# Source: [^/\n]+/(.+)$", re.MULTILINE)

__all__ = ["render_chart"]


def render_chart(tree: Tree, spec: ChartSpec, kube_version: str | None) -> Rendered:
    """A chart of the repository, or (``spec.remote``) one pulled from its repository: its
    objects are then located in the file that deploys it (``spec.chart``)."""
    chart_file = spec.chart if spec.remote else str(PurePosixPath(spec.chart, "Chart.yaml"))
    out = Rendered(chart_file)
    try:
        package = pull_chart(spec.remote) if spec.remote else None
        dependencies = [pull_chart(d) for d in remote_dependencies(tree, spec)]
        layers = _layers(tree, spec)
        caps = render_caps(tree.root)
        deadline = caps.deadline(time.monotonic())  # both renders of the chart together
        with tree.materialize("") as root, tempfile.TemporaryDirectory() as held:
            if package is None and (dependencies or _holds_unread(root / spec.chart)):
                package = _chart_copy(root / spec.chart, dependencies, Path(held))
            files = _layer_files(layers, root, Path(held))
            stream = helm_template(tree, spec, files, kube_version, root, package, deadline)
            count_documents(stream, caps)
            marked = _marked_render(tree, spec, layers, kube_version, root, package, deadline)
    except RenderCapError as exc:
        line = _chart_line(tree, spec)
        out.errors.append(ManifestError(chart_file, line, f"helm template {exc}"))
        return out
    except (HelmError, LoadFailure, yaml.YAMLError) as exc:
        out.errors.append(ManifestError(chart_file, _chart_line(tree, spec), str(exc)))
        return out
    owner = owning_layers(layers)
    traced = _by_identity(marked[1]) if marked else {}
    for body, source in _objects(tree, spec, stream, out):
        twin = traced.get(_identity(body))
        if marked and twin is not None:
            origins = field_origins(twin, marked[0], owner)
            source = replace(source, origins=origins)
        out.objects.append(RenderedObject(body, source))
    return out


def _layer_files(layers: list[ValuesLayer], root: Path, held: Path) -> list[Path]:
    """Values files as they are; values held in manifests written out as files of their own."""
    files = []
    for n, layer in enumerate(layers):
        if layer.source is None:
            files.append(root / layer.file)
            continue
        files.append(held / f"source-{n}.yaml")
        files[-1].write_text(yaml.safe_dump(layer.data, sort_keys=False))
    return files


def _chart_copy(chart: Path, packages: list[Path], held: Path) -> Path:
    """A copy of the chart without ``.git`` (a chart at the repository's root would
    hand git's files to ``.Files.Get``) or links, with the pulled dependencies in its
    ``charts/``, as ``helm dependency build`` would leave it (the repository's own
    folder is never written)."""
    copy = held / "chart"
    shutil.copytree(chart, copy, ignore=_unread)
    if packages:
        (copy / "charts").mkdir(exist_ok=True)
    for package in packages:
        shutil.copyfile(package, copy / "charts" / package.name)
    return copy


def _holds_unread(chart: Path) -> bool:
    """Whether the chart's folder holds what helm must not read (``.git``, a link): only
    then is it copied (a copy costs more than the walk that decides it)."""
    return any(_unread(folder, [*dirs, *files]) for folder, dirs, files in os.walk(chart))


def _unread(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == ".git" or Path(folder, n).is_symlink()]


def _layers(tree: Tree, spec: ChartSpec) -> list[ValuesLayer]:
    layers = []
    for index, file in enumerate(spec.values_files()):
        if not tree.is_file(file):
            if index == 0:
                continue  # a chart may have no values.yaml of its own
            raise HelmError(f"values file {file} does not exist")
        layers.append(read_layer(file, tree.read_text(file)))
    for source in spec.sources:
        layer = read_source_layer(tree.read_text(source.file), source)
        if not layer.data and not layer.lines and source.kind == "ConfigMap":
            raise HelmError(f"{source.file}: no ConfigMap {source.name} with values in it")
        layers.append(layer)
    return layers


def _marked_render(
    tree: Tree,
    spec: ChartSpec,
    layers: list[ValuesLayer],
    kube_version: str | None,
    root: Path,
    package: Path | None,
    deadline: float,
) -> tuple[Marked, str] | None:
    marked = mark(merge(layers))
    with tempfile.TemporaryDirectory(prefix="gitmedic-marked-") as tmp:
        values = Path(tmp, "marked-values.yaml")
        values.write_text(yaml.safe_dump(marked.values, sort_keys=False))
        try:
            stream = helm_template(tree, spec, [values], kube_version, root, package, deadline)
            return marked, stream
        except HelmError:
            return None  # templates that reject the markers: objects without field origins


def _objects(
    tree: Tree, spec: ChartSpec, stream: str, out: Rendered
) -> list[tuple[dict[str, object], Source]]:
    found = []
    for document, (template, text) in enumerate(_documents(stream)):
        file = str(PurePosixPath(spec.chart, template)) if template else out.file
        if spec.remote is not None:  # the templates are in the package, not the repository
            file = out.file
        parsed = parse_text(text, file)
        out.errors.extend(parsed.errors)
        for p in parsed.objects:
            line = _chart_line(tree, spec) if spec.remote else _kind_line(tree, file, p.body)
            found.append((p.body, Source(file, line, document, (), "helm", out.file)))
    return found


def _documents(stream: str) -> list[tuple[str, str]]:
    docs = []
    for text in re.split(r"^---[ \t]*$", stream, flags=re.MULTILINE):
        if text.strip():
            match = _SOURCE.search(text)
            docs.append((match[1] if match else "", text))
    return docs


def _kind_line(tree: Tree, file: str, body: dict[str, object]) -> int:
    """The template line that declares the object's kind (templates are not YAML)."""
    try:
        lines = tree.read_text(file).splitlines()
    except LoadFailure:
        return 1
    kind = re.compile(rf"^kind:\s*[\"']?{re.escape(str(body.get('kind')))}\b")
    return next((n for n, line in enumerate(lines, 1) if kind.match(line)), 1)


def _chart_line(tree: Tree, spec: ChartSpec) -> int:
    """The line of a deploying file that names the chart from a repository (``chart:``)."""
    if spec.remote is None:
        return 0
    try:
        lines = tree.read_text(spec.chart).splitlines()
    except LoadFailure:
        return 0
    named = re.compile(rf"^\s*(?:-\s+)?chart:\s*[\"']?{re.escape(spec.remote.chart)}\b")
    return next((n for n, line in enumerate(lines, 1) if named.match(line)), 1)


def _identity(body: dict[str, object]) -> tuple[str, str]:
    meta = body.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return str(body.get("kind")), str(name)


def _by_identity(stream: str) -> dict[tuple[str, str], dict[str, object]]:
    out: dict[tuple[str, str], dict[str, object]] = {}
    for _, text in _documents(stream):
        for p in parse_text(text, "marked").objects:
            out.setdefault(_identity(p.body), p.body)
    return out
