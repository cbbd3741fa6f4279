"""The real charts the corpus's Flux apps take from remote repositories, as packages.

``tests/fixtures/charts/<chart>-<version>/`` holds each chart folder copied from
its upstream repository at the release's tag (SOURCE.txt, LICENSE). A chart whose
``Chart.yaml`` names dependencies gets them in its ``charts/`` folder, as ``helm
dependency build`` leaves it, then ``helm package`` makes the .tgz that the chart's
repository serves. :data:`DECLARED` says which repository each corpus app declares
for each chart (the URL ``gitmedic charts add --repository`` takes).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA
from tests.support.chart_servers import package

CHARTS = Path(__file__).parents[1] / "fixtures" / "charts"
PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"

# chart folder -> the dependency folders its Chart.yaml names (crds: inside the chart)
DEPENDENCIES = {
    "kube-prometheus-stack-69.8.2": (
        "kube-state-metrics-5.30.1",
        "prometheus-node-exporter-4.44.1",
        "grafana-8.10.4",
        "prometheus-windows-exporter-0.9.2",
    ),
    "loki-6.55.0": ("minio-5.4.0", "grafana-agent-operator-0.5.2", "rollout-operator-0.43.0"),
}

# (repository the app's manifests declare, chart folder) for each chart it renders
DECLARED = {
    "flux2-monitoring-example": (
        ("oci://ghcr.io/prometheus-community/charts", "kube-prometheus-stack-69.8.2"),
        ("https://grafana.github.io/helm-charts", "loki-6.55.0"),
        ("https://grafana.github.io/helm-charts", "promtail-6.17.1"),
    ),
    "flux2-kustomize-helm-example": (
        ("https://stefanprodan.github.io/podinfo", "podinfo"),
        ("oci://quay.io/jetstack/charts", "cert-manager-1.21.1"),
        ("oci://docker.io/envoyproxy", "gateway-helm-1.9.0"),
    ),
}


def chart_folder(name: str) -> Path:
    """The chart itself: podinfo's from the shared data, the others' from the fixtures."""
    if name == "podinfo":
        return PODINFO
    return CHARTS / name / name.rsplit("-", 1)[0]


def package_chart(name: str, into: Path) -> Path:
    """``name`` (a chart folder of :data:`DECLARED`) packaged with its dependencies."""
    chart = chart_folder(name)
    deps = DEPENDENCIES.get(name, ())
    if deps:
        copy = into / "build" / chart.name
        shutil.copytree(chart, copy)
        for dep in deps:
            shutil.copytree(chart_folder(dep), copy / "charts" / chart_folder(dep).name)
        chart = copy
    return package(chart, into)


def packages_of(app: str, into: Path) -> list[tuple[str, Path]]:
    """(declared repository, package) of each chart the corpus app renders."""
    into.mkdir(parents=True, exist_ok=True)
    return [(repo, package_chart(name, into)) for repo, name in DECLARED[app]]


def seed_chart_cache(env: dict[str, str], packages: Path) -> None:
    """Every chart of :data:`DECLARED`, packaged into ``packages`` and added with the
    real ``gitmedic charts add`` to the cache ``env`` names (``GITMEDIC_CHART_CACHE``)."""
    for app in DECLARED:
        for repository, built in packages_of(app, packages / app):
            argv = [sys.executable, "-m", "gitmedic", "charts", "add"]
            argv += ["--repository", repository, str(built)]
            added = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
            if added.returncode != 0:
                raise RuntimeError(f"gitmedic charts add {built}: {added.stderr}")
