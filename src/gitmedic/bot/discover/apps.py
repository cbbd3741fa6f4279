"""``gitmedic init`` with no flags: the apps block from what the repository deploys.

Discovery (:mod:`gitmedic.reconciler.manifests.discover`) proposes one app per
environment; this writes them as ``.gitmedic/config.yaml``'s ``apps`` and prints,
for a person to check before committing, each app with why it was made, what was
followed without being an app (an app of apps, a cluster's root), and each
deployer left out with the reason (a chart from a Helm repository, a generator
only the cluster resolves, a source that is another repository).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gitmedic.reconciler.manifests.discover import Discovery, Proposal, discover, unique_names

__all__ = ["discovered_apps"]


def discovered_apps(repo: Path) -> tuple[str, list[str]]:
    """The YAML of the apps block (indented under ``apps:``) and the report's lines."""
    found = discover(repo)
    names = unique_names(found.proposals)
    entries = [_entry(name, p) for name, p in zip(names, found.proposals, strict=True)]
    report = _report(found, names)
    if not entries:  # nothing deployed found: the whole repository, for a person to narrow
        entries = [{"name": _repo_name(repo), "path": ".", "namespace": "default"}]
        report.append("no app found: wrote one app at path . (edit .gitmedic/config.yaml)")
    text = yaml.safe_dump(entries, sort_keys=False, default_flow_style=None, width=100)
    return "".join(f"  {line}\n" for line in text.splitlines()), report


def _entry(name: str, proposal: Proposal) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if proposal.deployed_by is not None:
        file, deployer = proposal.deployed_by
        entry["deployed_by"] = {"file": file, "name": deployer}
    else:
        entry["path"] = proposal.path or "."
    entry["namespace"] = proposal.namespace
    if proposal.cluster:
        entry["cluster"] = proposal.cluster
    if proposal.helm:
        entry["helm"] = dict(proposal.helm)
    if proposal.engine:
        entry["engine"] = dict(proposal.engine)
    return entry


def _report(found: Discovery, names: list[str]) -> list[str]:
    lines = [f"found {len(names)} app{'s' * (len(names) != 1)} ({_source(found)}):"]
    for name, proposal in zip(names, found.proposals, strict=True):
        where = proposal.path or "."
        if proposal.deployed_by is not None:
            where = f"deployed by {proposal.deployed_by[1]} in {proposal.deployed_by[0]}"
        cluster = f", cluster {proposal.cluster}" if proposal.cluster else ""
        engine = " ".join(proposal.engine.get(k, "") for k in ("kind", "application"))
        engine = f", engine {engine.strip()}" if engine.strip() else ""
        lines.append(f"  {name}: {where}, namespace {proposal.namespace}{cluster}{engine}")
        lines.append(f"    why: {proposal.why}")
    if found.notes:
        lines.append("followed, no app of their own:")
        lines.extend(f"  {note}" for note in found.notes)
    if found.left_out:
        lines.append(f"left out ({len(found.left_out)}):")
        lines.extend(f"  {item.what}: {item.why}" for item in found.left_out)
    return lines


def _source(found: Discovery) -> str:
    if found.deployers:
        return f"from {found.deployers} Argo CD / Flux deployers in the repository"
    return "no Argo CD or Flux deployer in the repository: from its folders"


def _repo_name(repo: Path) -> str:
    name = "".join(c if c.isalnum() else "-" for c in repo.resolve().name.lower()).strip("-")
    return name[:63] or "app"
