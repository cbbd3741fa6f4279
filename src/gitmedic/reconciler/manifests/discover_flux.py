"""Flux's deployers as discovery reads them: Kustomizations (from the repository's own
GitRepository, or an ExternalArtifact an ArtifactGenerator copies from it) and the
HelmReleases in what they deploy.

A Kustomization that deploys its own file (Flux's ``flux-system``, made by
bootstrap) is the cluster's root: followed, not an app (it deploys Flux itself).
One whose source is another repository, another branch, an OCI artifact or a
bucket is left out: its manifests are not in this checkout.
"""

from __future__ import annotations

import posixpath

from gitmedic.reconciler.manifests.chart_sources import undeclared_source
from gitmedic.reconciler.manifests.deployed_by import (
    Deployed,
    DeployerError,
    Reader,
    read_deployer,
)
from gitmedic.reconciler.manifests.discover_model import Discovery, Proposal
from gitmedic.reconciler.manifests.discover_scan import Doc, RepoScan, mapping, repo_path
from gitmedic.reconciler.manifests.flux_substitute import substituted_reader
from gitmedic.reconciler.manifests.kustomize_refs import KUSTOMIZATION_FILES
from gitmedic.reconciler.repofs import read_text

__all__ = ["FLUX_HELM", "FLUX_KUSTOMIZE", "discover_flux"]

FLUX_KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "Kustomization")
FLUX_HELM = ("helm.toolkit.fluxcd.io", "HelmRelease")
ARGO_KINDS = {("argoproj.io", "Application"), ("argoproj.io", "ApplicationSet")}
# What a folder holds besides the app itself: no reason to watch it as an app.
_NOT_WORKLOADS = {"Namespace"}
_FLUX_GROUP = "toolkit.fluxcd.io"


def discover_flux(scan: RepoScan, found: Discovery) -> None:
    releases_seen: set[tuple[str, str]] = set()
    read = substituted_reader(scan.root)  # a release's chart version as Flux builds it
    for doc in scan.docs:
        if (doc.group, doc.kind) == FLUX_KUSTOMIZE and doc.spec.get("sourceRef"):
            found.deployers += 1  # (without a source: a kustomize patch of one)
            _kustomization(scan, doc, found, releases_seen, read)
    for doc in scan.docs:  # a HelmRelease no Kustomization of the repo deploys
        if (doc.group, doc.kind) == FLUX_HELM and (doc.file, doc.name) not in releases_seen:
            chart = mapping(mapping(doc.spec.get("chart")).get("spec"))
            if not (chart.get("sourceRef") or doc.spec.get("chartRef")):
                continue  # a kustomize patch of a release, read with its overlay
            found.deployers += 1
            _release(scan, doc, doc.file, {}, found, read=read)


def _kustomization(
    scan: RepoScan,
    doc: Doc,
    found: Discovery,
    releases_seen: set[tuple[str, str]],
    read: Reader,
) -> None:
    what = f"{doc.file}: Flux Kustomization {doc.name}"
    path, problem = _source_path(scan, doc)
    if problem:
        found.leave(what, problem)
        return
    if path not in scan.dirs:
        found.leave(what, f"its path ./{path} is no folder of this repository")
        return
    files = scan.deployed_files(path)
    if doc.file in files:
        found.notes.append(f"{what} deploys itself (./{path}): the cluster's root, followed")
        return
    engine = {"kind": "flux", "application": doc.name, "namespace": doc.namespace or "flux-system"}
    cluster = posixpath.basename(posixpath.dirname(doc.file))  # clusters/<name>/apps.yaml
    docs = scan.docs_in(files)
    for release in (d for d in docs if (d.group, d.kind) == FLUX_HELM):
        releases_seen.add((release.file, release.name))
        overlay = _kustomization_file(scan, path) if path in scan.kustomize_dirs else release.file
        _release(scan, release, overlay, engine, found, cluster, read)
    own = [d for d in docs if _workload(d)]
    if not own:
        found.notes.append(f"{what} deploys ./{path}: Flux objects only, followed")
        return
    namespace = str(doc.spec.get("targetNamespace") or "") or _kustomize_namespace(scan, path)
    found.proposals.append(
        Proposal(
            name=doc.name,
            path=path,
            namespace=namespace or _common_namespace(own),
            why=f"{what} deploys ./{path} ({len(own)} objects)",
            engine=engine,
            cluster=cluster,
        )
    )


def _release(
    scan: RepoScan,
    doc: Doc,
    file: str,
    engine: dict[str, str],
    found: Discovery,
    cluster: str = "",
    read: Reader | None = None,
) -> None:
    what = f"{file}: Flux HelmRelease {doc.name}"
    try:
        deployed = read_deployer(read or (lambda rel: read_text(scan.root, rel)), file, doc.name)
    except DeployerError as exc:
        found.leave(what, str(exc))
        return
    remote = deployed.remote
    undeclared = undeclared_source(scan.root, remote, doc.namespace) if remote else ""
    if undeclared:  # never an app whose chart no declared repository could give
        found.leave(what, f"HelmRelease {doc.name} {undeclared}")
        return
    suffix = posixpath.basename(posixpath.dirname(file)) if file != doc.file else ""
    overlay = f" as the kustomization {file} renders it"
    found.proposals.append(
        Proposal(
            name=f"{doc.name}-{suffix}" if suffix and suffix != doc.name else doc.name,
            deployed_by=(file, doc.name),
            namespace=deployed.namespace or "default",
            why=f"{what} renders {_chart_of(deployed)}" + (overlay if file != doc.file else ""),
            engine=engine,
            cluster=cluster,
        )
    )


def _chart_of(deployed: Deployed) -> str:
    """What the release renders, said as what it is: the chart folder of this repository,
    or the chart its source repository holds (never the file or overlay reading it)."""
    remote = deployed.remote
    if remote is None:
        return f"the chart in {deployed.path}"
    version = f" {remote.version}" if remote.version else ""
    if remote.kind == "OCIRepository":
        return f"the chart of OCIRepository {remote.namespace}/{remote.name}{version}"
    return f"chart {remote.chart}{version} from {remote.kind} {remote.namespace}/{remote.name}"


def _source_path(scan: RepoScan, doc: Doc) -> tuple[str, str]:
    """The repo folder the Kustomization applies, or '' and why it is not this checkout's."""
    ref = mapping(doc.spec.get("sourceRef"))
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    path = repo_path(str(doc.spec.get("path") or "."))
    if kind == "GitRepository":
        if not _home_repository(scan, name):
            return "", f"its source GitRepository {name} is another repository or branch"
        return path, ""
    if kind == "ExternalArtifact":
        mapped = _artifact_path(scan, name, path)
        if mapped is None:
            return "", f"no ArtifactGenerator of this repository copies ./{path} of {name}"
        return mapped, ""
    return "", f"its source is {kind or 'missing'} {name}, not this repository"


def _home_repository(scan: RepoScan, name: str) -> bool:
    """``name`` is this checkout: Flux's own (``flux-system``), one declaring the same URL
    and ref, or one the repository does not declare (bootstrap made it)."""
    sources = {d.name: d for d in scan.docs if d.kind == "GitRepository" and _FLUX_GROUP in d.group}
    home = sources.get("flux-system")
    if name == "flux-system" or name not in sources:
        return True
    if home is None:
        return False
    return _checkout(sources[name]) == _checkout(home)


def _checkout(doc: Doc) -> tuple[str, str]:
    url = str(doc.spec.get("url") or "").lower().removesuffix("/").removesuffix(".git")
    for prefix in ("ssh://", "https://", "http://", "git@"):
        url = url.removeprefix(prefix)
    ref = mapping(doc.spec.get("ref"))
    return url.replace(":", "/"), str(ref.get("branch") or ref.get("tag") or "")


def _artifact_path(scan: RepoScan, artifact: str, path: str) -> str | None:
    """Where an ArtifactGenerator's ``copy`` took ``path`` of ``artifact`` from."""
    for gen in (d for d in scan.docs if d.kind == "ArtifactGenerator"):
        for spec in gen.spec.get("artifacts") or []:
            if mapping(spec).get("name") != artifact:
                continue
            for copy in mapping(spec).get("copy") or []:
                origin = _copied_from(mapping(copy), path)
                if origin is not None:
                    return origin
    return None


def _copied_from(copy: dict[str, object], path: str) -> str | None:
    source, target = str(copy.get("from") or ""), str(copy.get("to") or "")
    if not source.startswith("@") or not target.startswith("@artifact"):
        return None
    source_dir = repo_path(source.split("/", 1)[1].removesuffix("**")) if "/" in source else ""
    target_dir = repo_path(target.removeprefix("@artifact").removesuffix("**"))
    if target_dir and not (path == target_dir or path.startswith(target_dir + "/")):
        return None
    rest = path[len(target_dir) :].lstrip("/")
    return repo_path(posixpath.join(source_dir, rest))


def _kustomization_file(scan: RepoScan, folder: str) -> str:
    for name in KUSTOMIZATION_FILES:
        if (scan.root / folder / name).is_file():
            return posixpath.join(folder, name)
    return folder


def _workload(doc: Doc) -> bool:
    return (
        _FLUX_GROUP not in doc.group
        and (doc.group, doc.kind) not in ARGO_KINDS
        and doc.kind not in _NOT_WORKLOADS
    )


def _kustomize_namespace(scan: RepoScan, path: str) -> str:
    return str(scan.kustomize_dirs.get(path, {}).get("namespace") or "")


def _common_namespace(docs: list[Doc]) -> str:
    named = {d.namespace for d in docs if d.namespace}
    return named.pop() if len(named) == 1 else "default"
