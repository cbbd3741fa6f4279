"""``gitmedic init``'s discovery: one app per environment the repository deploys.

With deployers (Argo CD Applications and ApplicationSets, Flux Kustomizations and
HelmReleases: :mod:`.discover_argo`, :mod:`.discover_flux`), each environment they
deploy from this repository is an app, named after its deployer, with its
namespace and engine. Without any, apps are proposed from the folder structure:
each kustomize root no other kustomization includes (an overlay, not its base),
each chart (and each ``values-<env>.yaml`` beside its ``values.yaml``), and each
folder of plain manifests outside those. Two deployers of one environment (two
clusters' Kustomizations of one path) are one app. Names are made unique DNS
labels. Every app and every deployer left out carries the reason.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from pathlib import Path

from gitmedic.reconciler.manifests.deployed_by import DeployerError, read_deployer
from gitmedic.reconciler.manifests.discover_argo import discover_argo
from gitmedic.reconciler.manifests.discover_flux import discover_flux
from gitmedic.reconciler.manifests.discover_model import Discovery, LeftOut, Proposal
from gitmedic.reconciler.manifests.discover_render import why_unrenderable
from gitmedic.reconciler.manifests.discover_scan import RepoScan, scan_repo
from gitmedic.reconciler.repofs import read_text

__all__ = ["Discovery", "LeftOut", "Proposal", "discover", "unique_names"]

_SKIP_FOLDERS = {".gitmedic", ".github"}


def discover(root: Path) -> Discovery:
    scan = scan_repo(root)
    found = Discovery()
    discover_argo(scan, found)
    discover_flux(scan, found)
    if not found.deployers:
        _from_folders(scan, found)
    found.proposals = [p for p in _one_per_environment(found) if _renders(scan, p, found)]
    return found


def _renders(scan: RepoScan, proposal: Proposal, found: Discovery) -> bool:
    """False, the proposal left out saying why, when it would need a fetch to render."""
    folder = proposal.path
    if proposal.deployed_by is not None:
        file, name = proposal.deployed_by
        try:
            folder = read_deployer(lambda rel: read_text(scan.root, rel), file, name).path
        except DeployerError as exc:  # read when proposed: not expected here
            found.leave(f"{file}: {name}", str(exc))
            return False
    why = why_unrenderable(scan, "" if folder == "." else folder)
    if why:
        found.leave(f"{proposal.name} ({proposal.why})", why)
    return not why


def _one_per_environment(found: Discovery) -> list[Proposal]:
    kept: dict[tuple[object, ...], Proposal] = {}
    for proposal in found.proposals:
        first = kept.get(proposal.key)
        if first is None:
            kept[proposal.key] = proposal
            continue
        found.notes.append(f"{proposal.why}: the same environment as {first.name}")
        if first.cluster != proposal.cluster:  # on several clusters: no one cluster's
            kept[proposal.key] = replace(first, cluster="")
    return list(kept.values())


def unique_names(proposals: list[Proposal]) -> list[str]:
    """A DNS label per proposal, unique: its name, else with its folder's name, else a count."""
    names: list[str] = []
    shared = [_label(p.name) for p in proposals]
    for proposal in proposals:
        base = _label(proposal.name)
        where = proposal.path or posixpath.dirname((proposal.deployed_by or ("", ""))[0])
        # the folders nearest the app first: prod, then overlays-prod, ...
        parts = [p for p in reversed(where.split("/")) if p and _label(p) not in base]
        candidates = [_label(f"{base}-{part}") for part in parts]
        if shared.count(base) == 1:
            candidates.insert(0, base)
        name = next((c for c in candidates if c not in names), "")
        count = 2
        while not name or name in names:
            name, count = _label(f"{base}-{count}"), count + 1
        names.append(name)
    return names


def _label(text: str) -> str:
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    label = re.sub(r"-{2,}", "-", label)[:63].strip("-")
    return label or "app"


def _from_folders(scan: RepoScan, found: Discovery) -> None:
    included = scan.included_dirs()
    for folder in sorted(scan.kustomize_dirs):
        if _skipped(folder):
            continue
        if folder in included:
            found.notes.append(f"{folder or '.'}: a kustomize base the overlays include, no app")
            continue
        namespace = str(scan.kustomize_dirs[folder].get("namespace") or "default")
        found.proposals.append(
            Proposal(_folder_name(scan, folder), namespace, f"{folder}: a kustomize root", folder)
        )
    for chart in sorted(scan.chart_dirs):
        if not _skipped(chart):
            _chart_environments(scan, chart, found)
    covered = _rendered_files(scan)
    for folder in _manifest_folders(scan, covered):
        namespaces = {d.namespace for d in scan.docs if _below(d.file, folder)}
        names = sorted(n for n in namespaces if n)
        found.proposals.append(
            Proposal(
                _folder_name(scan, folder),
                names[0] if len(names) == 1 else "default",
                f"{folder or '.'}: a folder of manifests",
                folder or ".",
            )
        )


def _chart_environments(scan: RepoScan, chart: str, found: Discovery) -> None:
    name = posixpath.basename(chart) or "chart"
    found.proposals.append(
        Proposal(name, name, f"{chart}: a chart (values.yaml; namespace: the chart's name)", chart)
    )
    for values in sorted((scan.root / chart).glob("values-*.y*ml")):
        env = values.stem.removeprefix("values-")
        found.proposals.append(
            Proposal(
                f"{name}-{env}",
                _label(env),
                f"{chart}: the chart with {values.name} (namespace: its environment's name)",
                chart,
                helm={"values": [values.name], "release": name},
            )
        )


def _rendered_files(scan: RepoScan) -> set[str]:
    """Files a kustomize root or chart renders: not a folder of plain manifests."""
    out: set[str] = set()
    for folder in scan.kustomize_dirs:
        out |= scan.deployed_files(folder)
    return out


def _manifest_folders(scan: RepoScan, covered: set[str]) -> list[str]:
    """The highest folder holding each plain manifest that no kustomize root or chart
    renders, without climbing into a folder that holds one (or the root)."""
    rendered = set(scan.kustomize_dirs) | scan.chart_dirs
    out: set[str] = set()
    for file in sorted(scan.files_with_objects - covered):
        folder = posixpath.dirname(file)
        if _skipped(folder) or any(_below(folder, r) for r in rendered):
            continue
        while (
            folder and posixpath.dirname(folder) and not _holds(posixpath.dirname(folder), rendered)
        ):
            folder = posixpath.dirname(folder)
        out.add(folder)
    return sorted(out)


def _holds(folder: str, rendered: set[str]) -> bool:
    return any(_below(r, folder) for r in rendered)


def _below(path: str, folder: str) -> bool:
    return path == folder or not folder or path.startswith(folder + "/")


def _skipped(folder: str) -> bool:
    return bool(_SKIP_FOLDERS & set(folder.split("/")))


def _folder_name(scan: RepoScan, folder: str) -> str:
    return posixpath.basename(folder) or scan.root.resolve().name
