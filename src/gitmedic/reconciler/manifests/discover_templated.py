"""Apps of apps written as charts: the Argo CD Applications a chart's templates make.

A chart whose templates are Applications (one per team, as ``envs/<env>`` charts do)
has children that exist only once rendered. Discovery renders it offline with its
own ``values.yaml`` (the values an Application installing it passes are not read:
it is the app of apps of the cluster it runs in) and reads each Application made,
as :mod:`.discover_argo` reads a declared one. A child whose inline helm values
are the templating chart's own values (``values: {{ toYaml .Values }}``, the
common way to hand settings down) renders with that chart's ``values.yaml`` as a
values file after its own; other inline values exist only in the render, so such
a child is left out saying so. An Application whose destination is the cluster
Argo CD runs in is placed in the cluster named after the templating chart's folder
(``envs/dev``: ``dev``): one such chart is installed per cluster, so two of them
rendering one team's Deployment are two clusters, not one object defined twice.

The chart is the repository's, so hostile: it is rendered by helm with no network
(a chart with remote dependencies is left out first), and only Applications are
read from what it makes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from gitmedic.reconciler.manifests.discover_model import Discovery
from gitmedic.reconciler.manifests.discover_render import why_unrenderable
from gitmedic.reconciler.manifests.discover_scan import Doc, RepoScan, mapping
from gitmedic.reconciler.manifests.helm import ChartSpec
from gitmedic.reconciler.manifests.helm_render import render_chart
from gitmedic.reconciler.manifests.tree import FsTree
from gitmedic.reconciler.repofs import read_text

__all__ = ["Templated", "templated_applications"]

_APPLICATION = ("argoproj", "Application")


@dataclass(frozen=True)
class Templated:
    """An Application a chart renders, with what discovery needs to read it."""

    doc: Doc  # file: the template it came from
    chart: str  # the templating chart's folder
    values_file: str  # the chart's values.yaml when the child's inline values are them, else ""
    cluster: str  # the cluster the templating chart is installed in


def templated_applications(
    scan: RepoScan, found: Discovery, read: Callable[[str], str] | None = None
) -> list[Templated]:
    """Every Application the repository's app-of-apps charts render, in chart order."""
    out: list[Templated] = []
    for chart in sorted(scan.templated_apps):
        what = f"{chart}: a chart templating Argo CD Applications"
        why = why_unrenderable(scan, chart)
        if why:
            found.leave(what, why)
            continue
        rendered = render_chart(
            FsTree(scan.root.resolve()), ChartSpec(chart, namespace="argocd"), None
        )
        if rendered.errors:
            first = rendered.errors[0]
            found.leave(what, f"it does not render: {first.file}:{first.line}: {first.message}")
            continue
        own = _own_values(scan, chart, read)
        made = [
            _templated(scan, chart, o.body, o.source.file, own)
            for o in rendered.objects
            if _is_application(o.body)
        ]
        found.deployers += len(made)
        found.notes.append(f"{what} ({len(made)} Applications, rendered), followed")
        out += made
    return out


def _templated(scan: RepoScan, chart: str, body: dict[str, Any], file: str, own: Any) -> Templated:
    helm = _source_helm(body)
    values = helm.get("values")
    inline = yaml.safe_load(values) if isinstance(values, str) and values.strip() else None
    same = own is not None and inline == own
    values_file = posixpath.join(chart, "values.yaml") if same else ""
    cluster = posixpath.basename(chart) or posixpath.basename(str(scan.root))
    return Templated(Doc(file, body), chart, values_file, cluster)


def _own_values(scan: RepoScan, chart: str, read: Callable[[str], str] | None) -> Any:
    rel = posixpath.join(chart, "values.yaml")
    try:
        text = (read or (lambda r: read_text(scan.root, r)))(rel)
        return yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return None


def _source_helm(body: dict[str, Any]) -> dict[str, Any]:
    spec = mapping(body.get("spec"))
    sources = [mapping(s) for s in spec.get("sources") or []] or [mapping(spec.get("source"))]
    local = [s for s in sources if s.get("path")]
    return mapping(local[0].get("helm")) if local else {}


def _is_application(body: dict[str, Any]) -> bool:
    group = str(body.get("apiVersion", "")).split("/")[0]
    return (group.split(".")[0], str(body.get("kind"))) == _APPLICATION
