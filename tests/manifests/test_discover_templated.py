"""An app of apps written as a chart (its templates are Argo CD Applications): discovery
renders it with helm and follows each Application it makes, as if declared.

Integration tier: helm renders the chart (offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.discover import discover, unique_names
from tests.manifests.test_discover import CHART, DEPLOYMENT, write

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

ENVS_CHART = "apiVersion: v2\nname: dev-applications\nversion: 0.1.0\n"
HANDED_DOWN = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  destination: {{namespace: {name}, server: {{{{ .Values.server }}}}}}
  source:
    repoURL: https://example.com/acme/workloads.git
    path: teams/{name}/{{{{ .Values.env }}}}
    helm:
      values: |
        {{{{- toYaml .Values | nindent 8 }}}}
"""
OWN_VALUES = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: billing, namespace: argocd}
spec:
  destination: {namespace: billing, server: https://kubernetes.default.svc}
  source:
    repoURL: https://example.com/acme/workloads.git
    path: teams/billing/dev
    helm:
      values: |
        replicas: {{ .Values.replicas }}
"""
ENV_VALUES = "env: dev\nserver: https://kubernetes.default.svc\nreplicas: 2\n"


def repo(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "envs/dev/Chart.yaml": ENVS_CHART,
            "envs/dev/values.yaml": ENV_VALUES,
            "envs/dev/templates/riker.yaml": HANDED_DOWN.format(name="riker"),
            "envs/dev/templates/kirk.yaml": HANDED_DOWN.format(name="kirk"),
            "envs/dev/templates/billing.yaml": OWN_VALUES,
            "teams/riker/dev/Chart.yaml": CHART,
            "teams/riker/dev/templates/deployment.yaml": DEPLOYMENT,
            "teams/billing/dev/Chart.yaml": CHART,
            "teams/billing/dev/templates/deployment.yaml": DEPLOYMENT,
        },
    )


def test_the_applications_a_chart_templates_are_apps_with_the_values_it_hands_down(
    tmp_path: Path,
) -> None:
    found = discover(repo(tmp_path))

    apps = dict(zip(unique_names(found.proposals), found.proposals, strict=True))
    assert set(apps) == {"riker"}
    riker = apps["riker"]
    assert (riker.path, riker.namespace, riker.cluster) == ("teams/riker/dev", "riker", "dev")
    assert riker.helm == {"values": ["../../../envs/dev/values.yaml"], "release": "riker"}
    assert riker.engine == {"kind": "argocd-cr", "application": "riker", "namespace": "argocd"}
    assert "rendered from chart envs/dev" in riker.why
    left = {o.what.split(": ", 1)[1]: o.why for o in found.left_out}
    assert left["Argo CD Application kirk (rendered from chart envs/dev)"] == (
        "its path teams/kirk/dev is no folder of this repository"
    )
    assert left["Argo CD Application billing (rendered from chart envs/dev)"] == (
        "inline helm values of a generated Application are not read"
    )
    assert "envs/dev: a chart templating Argo CD Applications (3 Applications, rendered), " in (
        "\n".join(found.notes) + ", "
    )


def test_a_chart_that_does_not_render_is_left_out_saying_why(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "envs/dev/templates/broken.yaml").write_text("{{ .Values.missing.key }}\n")

    found = discover(root)

    # no Application is made up: the repo's folders are proposed, as without deployers
    assert found.proposals and all(not p.engine for p in found.proposals)
    (why,) = [o.why for o in found.left_out if o.what.startswith("envs/dev:")]
    assert why.startswith("it does not render: envs/dev/Chart.yaml")
