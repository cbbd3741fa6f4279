"""Whether an environment discovery found renders from this repository alone.

The renderers refuse what they would have to fetch (a kustomization naming a remote
resource, base or component: :mod:`.kustomize_refs`; a chart dependency from a Helm
repository or registry: :mod:`.helm`). Discovery asks the same questions first, so
such an environment is left out at ``init`` with the reason (naming the file and
what it would fetch) instead of failing every ``detect`` and ``run`` afterwards.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

import yaml

from gitmedic.reconciler.manifests.discover_scan import RepoScan, mapping, repo_path
from gitmedic.reconciler.manifests.kustomize_refs import _references, _remote
from gitmedic.reconciler.repofs import read_text

__all__ = ["why_unrenderable"]

_ALLOW = "set manifests.allow_remote_bases: true in .gitmedic/config.yaml to let kustomize fetch it"


def why_unrenderable(scan: RepoScan, folder: str) -> str:
    """'' when ``folder`` renders offline, else what it would fetch, naming the file."""
    if folder in scan.chart_dirs:
        return _chart_fetch(scan.root, folder)
    return _kustomize_fetch(scan, folder)


def _kustomize_fetch(scan: RepoScan, folder: str) -> str:
    seen: set[str] = set()
    pending = [folder]  # a stack, not recursion: a hostile repo may nest deep
    while pending:
        here = pending.pop()
        if here in seen or here not in scan.kustomize_dirs:
            continue
        seen.add(here)
        for field, ref in _references(scan.kustomize_dirs[here]):
            if _remote(ref):
                where = posixpath.join(here, "kustomization.yaml") if here else "kustomization.yaml"
                return f"{where} names the remote {field} {ref}: {_ALLOW}"
            pending.append(repo_path(posixpath.join(here, ref)))
    return ""


def _chart_fetch(root: Path, chart: str) -> str:
    for name in ("Chart.yaml", "requirements.yaml"):
        rel = posixpath.join(chart, name) if chart else name
        try:
            data = mapping(yaml.safe_load(read_text(root, rel)))
        except (OSError, ValueError, yaml.YAMLError):
            continue
        for dep in data.get("dependencies") or []:
            repo = str(mapping(dep).get("repository") or "")
            if repo and not repo.startswith("file://"):
                return (
                    f"{rel}: chart {posixpath.basename(chart)} depends on "
                    f"{mapping(dep).get('name')} {mapping(dep).get('version') or ''} from {repo}; "
                    "gitmedic renders offline (vendor it under charts/ with a file:// repository)"
                )
    return ""
