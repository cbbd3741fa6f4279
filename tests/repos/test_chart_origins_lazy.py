"""In ``detect``, a chart's marked render (the values line of each field) runs only when needed.

The render that maps fields to values lines is a second ``helm template`` per chart;
a detect whose findings name no field of a chart's objects never reads those lines,
so it never pays the render. When a finding does, the line is the one the eager render
gave. Outside ``origins_on_demand`` (the bot, which edits the tree it loaded) the
render still runs at load. Units count renders through the module's ``helm_template``, replaced by a
renderer that substitutes ``{{ .Values.KEY }}`` (helm itself is the integration
tier's); the real command's are counted by a ``GITMEDIC_HELM`` wrapper that logs
each invocation.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.detectors.origin import origin_of
from gitmedic.reconciler.manifests import helm_render
from gitmedic.reconciler.manifests.helm_render import origins_on_demand
from gitmedic.reconciler.manifests.load import DesiredState, load_desired
from tests.manifests.helpers import commit_all, init_repo, write
from tests.repos.conftest import gitmedic

LIMIT = "spec.template.spec.containers[0].resources.limits.memory"
CHART = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "values.yaml": "image: nginx:1.27\nmemory: 256Mi\n",
    "templates/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {memory: {{ .Values.memory }}}
""",
    "templates/service.yaml": """apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
""",
}


def chart(tmp_path: Path, memory: str = "256Mi") -> Path:
    folder = tmp_path / "web"
    write(folder, CHART)
    values = folder / "values.yaml"
    values.write_text(values.read_text().replace("256Mi", memory))
    return folder


def substitute(tree: Any, spec: Any, values: list[Path], _: Any, root: Path, *rest: Any) -> str:
    """``helm template`` for the charts here: the chart's values.yaml, then ``values`` over
    it, put in for ``{{ .Values.KEY }}``; each template under its ``# Source:`` line."""
    merged: dict[str, Any] = yaml.safe_load((root / spec.chart / "values.yaml").read_text())
    for file in values:
        merged.update(yaml.safe_load(file.read_text()) or {})
    docs = []
    for template in sorted((root / spec.chart / "templates").iterdir()):
        text = re.sub(
            r"\{\{ \.Values\.(\w+) \}\}", lambda m: str(merged[m[1]]), template.read_text()
        )
        docs.append(f"---\n# Source: web/templates/{template.name}\n{text}")
    return "".join(docs)


def on_demand(folder: Path) -> DesiredState:
    with origins_on_demand():
        return load_desired(folder)


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The values files of each render the loader runs, in order."""
    calls: list[list[str]] = []

    def counting(tree: Any, spec: Any, values: list[Path], *args: Any) -> str:
        calls.append([v.name for v in values])
        return substitute(tree, spec, values, *args)

    monkeypatch.setattr(helm_render, "helm_template", counting)
    return calls


def test_loading_a_chart_runs_one_render_and_reading_origins_runs_the_marked_one_once(
    tmp_path: Path, renders: list[list[str]]
) -> None:
    state = on_demand(chart(tmp_path))
    objects = list(state.snapshot)
    assert {o.kind for o in objects} == {"Deployment", "Service"}
    assert renders == [["values.yaml"]]  # loaded, bodies and template lines read: no trace

    deployment = state.snapshot.get("Deployment", "default", "web")
    assert deployment is not None and deployment.source is not None
    origin = origin_of(deployment.source.origins, LIMIT)
    assert origin is not None
    assert (origin.file, origin.line, origin.key) == ("values.yaml", 2, "memory")
    assert renders == [["values.yaml"], ["marked-values.yaml"]]

    service = state.snapshot.get("Service", "default", "web")
    assert service is not None and service.source is not None
    assert tuple(service.source.origins) == ()  # nothing of the Service comes from values
    assert len(renders) == 2  # one marked render per chart, whichever object asks


def test_charts_rendered_side_by_side_wait_too(tmp_path: Path, renders: list[list[str]]) -> None:
    """The render pool's threads see ``origins_on_demand`` (each job runs in a copy of
    the caller's context)."""
    write(
        tmp_path / "repo",
        {f"{app}/{name}": text for app in ("api", "web") for name, text in CHART.items()},
    )
    state = on_demand(tmp_path / "repo")
    assert not state.errors and list(state.snapshot)
    assert renders == [["values.yaml"], ["values.yaml"]]


def test_two_loads_of_one_chart_compare_equal_without_the_marked_render(
    tmp_path: Path, renders: list[list[str]]
) -> None:
    folder = chart(tmp_path)
    first, second = (list(on_demand(folder).snapshot) for _ in range(2))
    assert first == second
    assert renders == [["values.yaml"], ["values.yaml"]]


def test_a_chart_changed_after_loading_gives_no_origins_rather_than_other_lines(
    tmp_path: Path, renders: list[list[str]]
) -> None:
    folder = chart(tmp_path)
    state = on_demand(folder)
    values = folder / "values.yaml"
    values.write_text("# a line more\n" + values.read_text())
    deployment = state.snapshot.get("Deployment", "default", "web")
    assert deployment is not None and deployment.source is not None
    assert tuple(deployment.source.origins) == ()  # the template line stands, not line 3
    assert renders == [["values.yaml"]]


def test_outside_detect_the_marked_render_runs_at_load_with_the_same_lines(
    tmp_path: Path, renders: list[list[str]]
) -> None:
    folder = chart(tmp_path)
    state = load_desired(folder)  # as the bot loads: it edits the tree afterwards
    assert renders == [["values.yaml"], ["marked-values.yaml"]]
    values = folder / "values.yaml"
    values.write_text("# a line more\n" + values.read_text())  # the bot's edit
    deployment = state.snapshot.get("Deployment", "default", "web")
    assert deployment is not None and deployment.source is not None
    origin = origin_of(deployment.source.origins, LIMIT)
    assert origin is not None and (origin.file, origin.line) == ("values.yaml", 2)
    assert len(renders) == 2


def logging_helm(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose helm logs its arguments, one invocation a line, then runs helm."""
    real = shutil.which("helm")
    assert real is not None
    log = tmp_path / "helm.log"
    wrapper = tmp_path / "bin/helm"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "GITMEDIC_HELM": str(wrapper)}, log


def templates(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("template ")]


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_detect_without_a_finding_in_the_chart_runs_helm_template_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, log = logging_helm(tmp_path)
    monkeypatch.setenv("GITMEDIC_HELM", env["GITMEDIC_HELM"])
    run = gitmedic("detect", chart(tmp_path), "--format", "json")
    assert run.rc == 0, run.err
    assert run.json()["findings"] == []
    assert len(templates(log)) == 1 and "marked-values" not in log.read_text()


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("rev", ["", "HEAD"])
def test_detect_with_a_finding_in_values_runs_the_marked_render_and_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rev: str
) -> None:
    env, log = logging_helm(tmp_path)
    monkeypatch.setenv("GITMEDIC_HELM", env["GITMEDIC_HELM"])
    folder = chart(tmp_path, memory="1Mi")
    init_repo(folder)
    commit_all(folder)
    at = ["--rev", rev] if rev else []
    run = gitmedic("detect", folder, *at, "--format", "json")
    assert run.rc == 1, run.err
    located = {(f["rule"], f["file"], f["line"]) for f in run.json()["findings"]}
    assert ("memory-limit-too-small", "values.yaml", 2) in located, located
    assert len(templates(log)) == 2 and "marked-values" in templates(log)[1]
    text = gitmedic("detect", folder, *at)
    assert "set by memory at values.yaml:2" in text.out, text.out
