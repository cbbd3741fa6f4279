"""Rendering Helm charts with ``helm template``, offline and without the user's helm config.

helm is found as ``$GITMEDIC_HELM`` or on ``PATH``; a missing helm is an error
naming the install, never a silent skip. It runs with ``HELM_*`` homes in an
empty temporary folder (no repositories, plugins or registry logins of the
user's are read) and ``KUBECONFIG`` pointing nowhere; ``helm template`` talks to
no cluster and runs no hooks (``--no-hooks --skip-tests`` leave hooks and tests
out of the desired state). A chart whose dependency names a remote repository
renders when the dependency is vendored under ``charts/`` (as ``helm dependency
build`` leaves it), else it is pulled from the repository ``Chart.yaml`` names
into a copy of the chart: ``helm template`` never reaches the network. A chart
from a repository is pulled first (:mod:`.chart_pull`) and rendered from its
package.

Each rendered object's source is its template (``# Source:`` comments). Which
values feed which fields is found with one more render (:mod:`.helm_trace`).
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from gitmedic.reconciler.config import ValuesSource
from gitmedic.reconciler.manifests.chart_pull import RemoteChart
from gitmedic.reconciler.manifests.helm_binary import HelmError as HelmError
from gitmedic.reconciler.manifests.helm_binary import helm_env, helm_path
from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.render_caps import RenderCapError, render_caps, run_capped
from gitmedic.reconciler.manifests.render_pool import go_env
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree


@dataclass(frozen=True)
class ChartSpec:
    """One Helm app: a chart folder, values files in order, release and namespace."""

    chart: str  # repo-relative folder holding Chart.yaml
    values: tuple[str, ...] = ()  # relative to the chart folder, applied after values.yaml
    release: str = ""  # default: the chart folder's name
    namespace: str = "default"
    sources: tuple[ValuesSource, ...] = ()  # values in manifests (Flux), after the files
    remote: RemoteChart | None = None  # a chart from a repository: ``chart`` is its deployer

    @property
    def release_name(self) -> str:
        """The release, else the chart folder's name ("release" for a chart at the root)."""
        return self.release or PurePosixPath(self.chart).name or "release"

    def values_files(self) -> list[str]:
        """Repo-relative values files as helm layers them: the chart's values.yaml first."""
        if self.remote is not None:  # its values.yaml is in the package, not the repository
            return []
        own = str(PurePosixPath(self.chart, "values.yaml"))
        given = [_inside(self.chart, v) for v in self.values]
        return [own, *[v for v in given if v != own]]


def remote_dependencies(tree: Tree, spec: ChartSpec) -> list[RemoteChart]:
    """The dependencies to pull: those from a repository that are not vendored under
    ``charts/`` (as ``helm dependency build`` leaves them), each from the repository its
    ``Chart.yaml`` declares. A repository named by an alias of the user's helm config
    (``@stable``) is refused: gitmedic reads no helm config."""
    if spec.remote is not None:
        return []  # a package from a repository carries its dependencies
    out = []
    for name in ("Chart.yaml", "requirements.yaml"):
        rel = str(PurePosixPath(spec.chart, name))
        if not tree.is_file(rel):
            continue
        data = yaml.safe_load(tree.read_text(rel)) or {}
        for dep in data.get("dependencies") or [] if isinstance(data, dict) else []:
            dep = dep if isinstance(dep, dict) else {}
            repo = str(dep.get("repository") or "")
            if not repo or repo.startswith("file://") or _vendored(tree, spec, dep):
                continue
            if not repo.startswith(("https://", "http://", "oci://")):
                raise HelmError(
                    f"{rel}: dependency {dep.get('name')!r} comes from {repo}, a name in a "
                    "helm config gitmedic does not read; give its URL, or vendor it under "
                    f"{spec.chart}/charts/ (helm dependency build)"
                )
            version = str(dep.get("version") or "")
            out.append(RemoteChart(repo, str(dep.get("name") or ""), version, rel))
    return out


def _vendored(tree: Tree, spec: ChartSpec, dep: dict[str, object]) -> bool:
    """``charts/<name>`` (a folder with a Chart.yaml) or ``charts/<name>-<version>.tgz``,
    as ``helm dependency build`` leaves it: helm template renders it from there."""
    name = str(dep.get("name") or "")
    charts = str(PurePosixPath(spec.chart, "charts"))
    if not name or "/" in name:
        return False
    if tree.is_file(f"{charts}/{name}/Chart.yaml"):
        return True
    packaged = re.compile(rf"^{re.escape(name)}-\d[^/]*\.tgz$")
    return any(
        packaged.match(PurePosixPath(f).name) and str(PurePosixPath(f).parent) == charts
        for f in tree.files(charts)
    )


def helm_template(
    tree: Tree,
    spec: ChartSpec,
    values: list[Path],
    kube_version: str | None,
    root: Path,
    package: Path | None = None,
    deadline: float | None = None,
) -> str:
    """The rendered stream; ``values`` are absolute files (inside ``root``, the tree's copy).
    ``deadline``: the render's (:mod:`.render_caps`), shared with its other helm runs.
    ``package``: the pulled package of a chart from a repository, or the chart's copy."""
    chart = str(package or root / spec.chart)
    argv = [helm_path(), "template", spec.release_name, chart]
    for v in values:
        argv += ["--values", str(v)]
    argv += ["--namespace", spec.namespace]
    if kube_version:  # else helm's own default
        argv += ["--kube-version", kube_version]
    argv += ["--no-hooks", "--skip-tests"]
    caps = render_caps(tree.root)
    with tempfile.TemporaryDirectory(prefix="gitmedic-helm-") as home:
        try:
            proc = run_capped(
                argv,
                env=go_env(helm_env(Path(home)), caps.memory_mib),
                cwd=home,
                caps=caps,
                deadline=deadline or caps.deadline(time.monotonic()),
            )
        except RenderCapError as exc:
            raise HelmError(f"helm template {exc}") from None
        except OSError as exc:
            raise HelmError(f"helm template failed: {exc}") from None
    if proc.returncode != 0:
        stderr = proc.stderr.strip()
        if package is not None and package.is_dir():  # the chart's copy: name the chart
            stderr = stderr.replace(str(package), spec.chart)
        message = stderr.replace(str(root) + "/", "").splitlines()
        raise HelmError(f"helm template failed: {message[0] if message else proc.returncode}")
    return proc.stdout


def _inside(chart: str, rel: str) -> str:
    """A values file named relative to the chart, as a repo-relative path inside the repo."""
    if PurePosixPath(rel).is_absolute():
        raise HelmError(f"values file {rel!r} must be relative to the chart folder {chart}")
    parts: list[str] = []
    for part in PurePosixPath(chart, rel).parts:
        if part == "..":
            if not parts:
                raise HelmError(f"values file {rel!r} of chart {chart} is outside the repository")
            parts.pop()
        elif part == ".git":
            raise HelmError(f"values file {rel!r} of chart {chart} is inside .git/, git's own")
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def load_failure(file: str, exc: Exception) -> ManifestError:
    line = exc.line if isinstance(exc, LoadFailure) else 0
    return ManifestError(file, line, str(exc))
