"""Argo CD's deployers as discovery reads them: Applications, and the Applications an
ApplicationSet makes from generators the repository itself resolves (``list``, and
``git`` ``directories`` matched against this checkout's folders).

An Application whose path deploys other Applications is an app of apps: followed
(its children are read where they are declared), not an app of its own. A chart
that templates Applications is one too: it is rendered and its Applications are
read as if declared (:mod:`.discover_templated`). Generators that need the cluster
or a provider (clusters, SCM, pull requests, plugins, matrices of them) are left
out naming the generator.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gitmedic.reconciler.manifests.deployed_by import DeployerError, read_deployer
from gitmedic.reconciler.manifests.discover_model import Discovery, Proposal
from gitmedic.reconciler.manifests.discover_scan import Doc, RepoScan, mapping, repo_path
from gitmedic.reconciler.manifests.discover_templated import Templated, templated_applications
from gitmedic.reconciler.repofs import read_text

__all__ = ["discover_argo"]

APPLICATION = ("argoproj.io", "Application")
APPLICATION_SET = ("argoproj.io", "ApplicationSet")
_DEPLOYER_KINDS = {"Application", "ApplicationSet", "Kustomization", "HelmRelease"}
_PARAM = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")
MAX_GENERATED = 200  # Applications one ApplicationSet may make in discovery


def discover_argo(scan: RepoScan, found: Discovery) -> None:
    for doc in scan.docs:
        if (doc.group, doc.kind) == APPLICATION:
            found.deployers += 1
            _application(scan, doc, found, generated_by=None)
        elif (doc.group, doc.kind) == APPLICATION_SET:
            found.deployers += 1
            _application_set(scan, doc, found)
    for child in templated_applications(scan, found):
        _application(scan, child.doc, found, generated_by=None, templated=child)


def _application(
    scan: RepoScan,
    doc: Doc,
    found: Discovery,
    generated_by: Doc | None,
    templated: Templated | None = None,
) -> None:
    origin = f" (made by ApplicationSet {generated_by.name})" if generated_by else ""
    origin = f" (rendered from chart {templated.chart})" if templated else origin
    what = f"{doc.file}: Argo CD Application {doc.name}{origin}"
    spec = doc.spec
    sources = [mapping(s) for s in spec.get("sources") or []] or [mapping(spec.get("source"))]
    local = [s for s in sources if s.get("path")]
    if not local:
        chart = next((str(s.get("chart")) for s in sources if s.get("chart")), "")
        repo = next((str(s.get("repoURL")) for s in sources if s.get("chart")), "")
        why = (
            f"chart {chart} comes from {repo}: gitmedic renders from this repository only"
            if chart
            else "it names no source path"
        )
        found.leave(what, why)
        return
    path = repo_path(str(local[0]["path"]))
    if path not in scan.dirs:
        found.leave(what, f"its path {path} is no folder of this repository")
        return
    destination = mapping(spec.get("destination"))
    namespace = str(destination.get("namespace") or "")
    cluster = _cluster(destination) or (templated.cluster if templated else "")
    engine = {"kind": "argocd-cr", "application": doc.name, "namespace": doc.namespace or "argocd"}
    if path in scan.templated_apps:
        found.notes.append(f"{what}: an app of apps, chart {path} templates its Applications")
        return
    children = [d for d in scan.docs_in(scan.deployed_files(path)) if _deployer(d)]
    if children and path not in scan.chart_dirs:
        found.notes.append(
            f"{what}: an app of apps ({len(children)} deployers in {path}), followed"
        )
        return
    if path in scan.chart_dirs:
        made = generated_by is not None or templated is not None
        proposal = _chart(scan, doc, local[0], path, namespace, what, made, found, templated)
        if proposal is not None:
            found.proposals.append(replace(proposal, engine=engine, cluster=cluster))
        return
    why = f"{what} deploys {path}"
    found.proposals.append(
        Proposal(doc.name, namespace or "default", why, path, engine=engine, cluster=cluster)
    )


def _cluster(destination: dict[str, Any]) -> str:
    """The destination cluster's name, '' for the one Argo CD runs in."""
    name = str(destination.get("name") or "")
    server = str(destination.get("server") or "")
    if name in ("", "in-cluster") and server in ("", "https://kubernetes.default.svc"):
        return ""
    return name or server.removeprefix("https://").split("/")[0].split(":")[0]


def _chart(
    scan: RepoScan,
    doc: Doc,
    source: dict[str, Any],
    path: str,
    namespace: str,
    what: str,
    made: bool,
    found: Discovery,
    templated: Templated | None = None,
) -> Proposal | None:
    why = f"{what} renders chart {path}"
    if not made:  # the file holds it: config reads its values where they are
        try:
            read_deployer(lambda rel: read_text(scan.root, rel), doc.file, doc.name)
        except DeployerError as exc:
            found.leave(what, str(exc))
            return None
        return Proposal(doc.name, namespace or "default", why, deployed_by=(doc.file, doc.name))
    helm = mapping(source.get("helm"))
    values = [str(v) for v in helm.get("valueFiles") or []]
    if templated is not None and templated.values_file:  # its inline values: the chart's own
        helm = {k: v for k, v in helm.items() if k != "values"}
        values.append(posixpath.relpath(templated.values_file, path))
        why += f" with {templated.values_file} (the values its chart hands down)"
    if any(helm.get(k) for k in ("values", "valuesObject", "parameters")):
        found.leave(what, "inline helm values of a generated Application are not read")
        return None
    release = str(helm.get("releaseName") or doc.name)
    return Proposal(
        doc.name, namespace or "default", why, path, helm={"values": values, "release": release}
    )


def _application_set(scan: RepoScan, doc: Doc, found: Discovery) -> None:
    what = f"{doc.file}: Argo CD ApplicationSet {doc.name}"
    template = mapping(doc.spec.get("template"))
    go = bool(doc.spec.get("goTemplate"))
    made = 0
    for generator in doc.spec.get("generators") or []:
        params, problem = _parameters(scan, mapping(generator))
        if problem:
            found.leave(what, problem)
            continue
        for values in params[:MAX_GENERATED]:
            body, missing = _fill(template, values, go)
            if _unresolved(body):
                found.leave(what, f"its template names {missing}, which the generator lacks")
                break
            app = Doc(
                doc.file, {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", **body}
            )
            _application(scan, app, found, generated_by=doc)
            made += 1
    if made:
        found.notes.append(f"{what} makes {made} Applications from this repository")


def _parameters(scan: RepoScan, generator: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    if "list" in generator:
        elements = mapping(generator["list"]).get("elements")
        if not isinstance(elements, list):
            return [], "its list generator has no elements in the file"
        return [mapping(e) for e in elements], ""
    git = mapping(generator.get("git"))
    if git.get("directories"):
        return _directories(scan, git["directories"]), ""
    kind = next(iter(generator), "empty")
    return [], f"its {kind} generator needs what only the cluster or a provider knows"


def _directories(scan: RepoScan, patterns: Any) -> list[dict[str, Any]]:
    entries = [mapping(p) for p in patterns if isinstance(p, dict)]
    include = [str(e.get("path")) for e in entries if e.get("path") and not e.get("exclude")]
    exclude = [str(e.get("path")) for e in entries if e.get("path") and e.get("exclude")]
    chosen = [
        d
        for d in sorted(scan.dirs)
        if d and any(_glob(d, p) for p in include) and not any(_glob(d, p) for p in exclude)
    ]
    return [_path_params(d) for d in chosen]


def _glob(folder: str, pattern: str) -> bool:
    """Go's path.Match: ``*`` stays within one folder."""
    parts, wanted = folder.split("/"), repo_path(pattern).split("/")
    if len(parts) != len(wanted):
        return False
    return all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, wanted, strict=True))


def _path_params(folder: str) -> dict[str, Any]:
    base = posixpath.basename(folder)
    segments = folder.split("/")
    flat: dict[str, Any] = {
        "path": folder,
        "path.path": folder,
        "path.basename": base,
        "path.basenameNormalized": re.sub(r"[^a-z0-9-]", "-", base.lower()),
    }
    flat.update({f"path[{i}]": s for i, s in enumerate(segments)})
    return flat


def _fill(template: Any, values: dict[str, Any], go: bool) -> tuple[Any, str]:
    """The template with every ``{{param}}`` of the generator's values replaced."""
    flat = dict(_flatten(values))
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        key = match.group(1).strip()
        key = key.removeprefix(".") if go else key
        if key not in flat:
            missing.append(match.group(0))
            return match.group(0)
        return str(flat[key])

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return _PARAM.sub(one, node)
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    filled = walk(template)
    return filled, ", ".join(sorted(set(missing)))


def _unresolved(body: dict[str, Any]) -> bool:
    """A parameter left in what discovery reads: the name, the source path, the namespace
    (others, such as ``repoURL``, are Argo CD's to fill and not read here)."""
    spec = mapping(body.get("spec"))
    sources = [mapping(s) for s in spec.get("sources") or []] or [mapping(spec.get("source"))]
    read = [
        mapping(body.get("metadata")).get("name"),
        mapping(spec.get("destination")).get("namespace"),
        *(s.get("path") for s in sources),
    ]
    return any("{{" in str(value or "") for value in read)


def _flatten(values: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in values.items():
        name = f"{prefix}{key}"
        yield name, value
        if isinstance(value, dict):
            yield from _flatten(value, name + ".")


def _deployer(doc: Doc) -> bool:
    return doc.kind in _DEPLOYER_KINDS and (
        "argoproj.io" in doc.group or "toolkit.fluxcd.io" in doc.group
    )
