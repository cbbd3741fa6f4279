"""A Helm app's desired state: its rendered objects, each at its template and values lines."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from functools import partial
from pathlib import Path, PurePosixPath

import yaml

from gitmedic.detectors.origin import FieldOrigin, LazyOrigins
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
from gitmedic.reconciler.manifests.tree import FsTree, LoadFailure, Tree

_SOURCE = re.compile(r"^# Source: [^/\n]+/(.+)$", re.MULTILINE)

__all__ = ["origins_on_demand", "render_chart"]

_ON_DEMAND: ContextVar[bool] = ContextVar("gitmedic_origins_on_demand", default=False)


@contextmanager
def origins_on_demand() -> Iterator[None]:
    """Within it, a chart's marked render waits for the first reader of its objects'
    origins (:class:`_MarkedTrace`): for a command that reads the tree once and exits
    (``detect``), where most runs read none. Outside it the render runs with the chart's
    own, as the bot needs: it edits the working tree it loaded, and a later render
    would read the edited templates (the trace then gives no origins rather than
    wrong lines, but the bot would lose a values line it had before)."""
    token = _ON_DEMAND.set(True)
    try:
        yield
    finally:
        _ON_DEMAND.reset(token)


def render_chart(tree: Tree, spec: ChartSpec, kube_version: str | None) -> Rendered:
    """A chart of the repository, or (``spec.remote``) one pulled from its repository: its
    objects are then located in the file that deploys it (``spec.chart``). Which values
    line feeds which field is found by a second, marked render (:class:`_MarkedTrace`),
    run after this one, or within :func:`origins_on_demand` when a reader first asks an
    object for its origins."""
    chart_file = spec.chart if spec.remote else str(PurePosixPath(spec.chart, "Chart.yaml"))
    out = Rendered(chart_file)
    try:
        package = pull_chart(spec.remote) if spec.remote else None
        dependencies = [pull_chart(d) for d in remote_dependencies(tree, spec)]
        layers = _layers(tree, spec)
        caps = render_caps(tree.root)
        deadline = caps.deadline(time.monotonic())
        with _chart_at(tree, spec, package, dependencies) as (root, chart, held):
            files = _layer_files(layers, root, held)
            stream = helm_template(tree, spec, files, kube_version, root, chart, deadline)
            count_documents(stream, caps)
    except RenderCapError as exc:
        line = _chart_line(tree, spec)
        out.errors.append(ManifestError(chart_file, line, f"helm template {exc}"))
        return out
    except (HelmError, LoadFailure, yaml.YAMLError) as exc:
        out.errors.append(ManifestError(chart_file, _chart_line(tree, spec), str(exc)))
        return out
    trace = _MarkedTrace(tree, spec, layers, kube_version, package, dependencies)
    if not _ON_DEMAND.get():
        trace.origins(("", ""))  # now, beside the chart's own render
    for body, source in _objects(tree, spec, stream, out):
        identity = _identity(body)
        lazy = LazyOrigins(partial(trace.origins, identity), (trace.key, identity))
        out.objects.append(RenderedObject(body, replace(source, origins=lazy)))
    return out


@contextmanager
def _chart_at(
    tree: Tree, spec: ChartSpec, package: Path | None, dependencies: list[Path]
) -> Iterator[tuple[Path, Path | None, Path]]:
    """The tree on disk, the chart helm reads (the pulled package, a copy holding the
    pulled dependencies, or None: the tree's own folder) and a folder for written files."""
    with tree.materialize("") as root, tempfile.TemporaryDirectory() as held:
        if package is None and (dependencies or _holds_unread(root / spec.chart)):
            package = _chart_copy(root / spec.chart, dependencies, Path(held))
        yield root, package, Path(held)


class _MarkedTrace:
    """A chart's marked render (:mod:`.helm_trace`), run once, the first time one of its
    objects' origins is read: most runs locate no finding in a chart's values, and the
    render costs as much as the chart's own. The values layers are those read for the
    render; a working tree whose chart changed since (its files' sizes and times) gives
    no origins rather than lines of other values (findings then sit at the template)."""

    def __init__(
        self,
        tree: Tree,
        spec: ChartSpec,
        layers: list[ValuesLayer],
        kube_version: str | None,
        package: Path | None,
        dependencies: list[Path],
    ) -> None:
        self._args = (tree, spec, layers, kube_version, package, dependencies)
        self._stamp = _stamp(tree, spec)
        self._lock = threading.Lock()
        self._traced: dict[tuple[str, str], tuple[FieldOrigin, ...]] | None = None
        self.key = _inputs_key(spec, layers, kube_version, package, self._stamp)

    def origins(self, identity: tuple[str, str]) -> tuple[FieldOrigin, ...]:
        with self._lock:
            if self._traced is None:
                self._traced = self._trace()
        return self._traced.get(identity, ())

    def _trace(self) -> dict[tuple[str, str], tuple[FieldOrigin, ...]]:
        tree, spec, layers, kube_version, package, dependencies = self._args
        if _stamp(tree, spec) != self._stamp:
            return {}
        try:
            deadline = render_caps(tree.root).deadline(time.monotonic())
            with _chart_at(tree, spec, package, dependencies) as (root, chart, _):
                marked = _marked_render(tree, spec, layers, kube_version, root, chart, deadline)
        except (RenderCapError, HelmError, LoadFailure, yaml.YAMLError):
            return {}  # the objects keep their template lines, as when markers are refused
        if marked is None:
            return {}
        owner = owning_layers(layers)
        return {
            identity: field_origins(twin, marked[0], owner)
            for identity, twin in _by_identity(marked[1]).items()
        }


def _stamp(tree: Tree, spec: ChartSpec) -> tuple[tuple[str, int, int], ...]:
    """A working tree's chart files by size and time (a commit's cannot change: empty)."""
    if not isinstance(tree, FsTree) or spec.remote is not None:
        return ()
    out = []
    for folder, dirs, names in os.walk(tree.root / spec.chart):
        dirs[:] = [d for d in dirs if d != ".git"]  # helm never reads git's files
        for name in names:
            try:
                st = os.stat(Path(folder, name))
            except OSError:
                continue
            out.append((str(Path(folder, name)), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def _inputs_key(
    spec: ChartSpec,
    layers: list[ValuesLayer],
    kube_version: str | None,
    package: Path | None,
    stamp: tuple[tuple[str, int, int], ...],
) -> str:
    """What the marked render's origins follow from, as one digest."""
    parts = [
        (lay.file, lay.data, sorted(lay.lines.items()), lay.source, sorted(lay.parameters.items()))
        for lay in layers
    ]
    text = repr((spec, kube_version, str(package), stamp, parts))
    return hashlib.sha256(text.encode()).hexdigest()


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
