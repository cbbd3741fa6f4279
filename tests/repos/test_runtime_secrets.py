"""The sim never invents a missing Secret (issue 23, item 5), through the real CLI.

Flux's kustomize-helm example with its charts added to the cache (``gitmedic charts
add``) deploys envoy-gateway, whose Deployment mounts Secret ``envoy-gateway``: a Helm
hook Job (certgen) writes it at install, and the render leaves hooks out. No commit of
the repository ever defined it, so the sim takes it as made at runtime: ``run --once``
on the untouched repository exits 0 with no incident and no PR. A Secret that a commit
defined and a later one removed from one environment is still missing: the incident is
seen and the removal is undone in that environment alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.manifests.helpers import commit_all, git
from tests.repos.conftest import gitmedic
from tests.repos.test_discovered_repos import adopted, prs
from tests.support.real_charts import packages_of

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("helm_on_path")]

FLUX = "flux2-kustomize-helm-example"
RUNTIME_SECRET = "envoy-gateway"
SECRET = "apps/production/podinfo-auth.yaml"
SECRET_BODY = """apiVersion: v1
kind: Secret
metadata:
  name: podinfo-auth
  namespace: podinfo
stringData:
  token: s3cret
"""
READS = """    extraEnvs:
      - name: AUTH_TOKEN
        valueFrom:
          secretKeyRef: {name: podinfo-auth, key: token}
"""


@pytest.fixture
def flux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example adopted (``gitmedic init``, committed), its charts in the cache."""
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(tmp_path / "chart-cache"))
    for repository, pkg in packages_of(FLUX, tmp_path / "packages"):
        added = gitmedic("charts", "add", "--repository", repository, pkg)
        assert added.rc == 0, added.err
    repo, _ = adopted(tmp_path, FLUX)
    return repo


def run_once(repo: Path) -> tuple[int, dict[str, Any], str]:
    done = gitmedic(
        "run", ".", "--cluster", "sim", "--forge", "local", "--once", "--json", cwd=repo
    )
    assert "Traceback" not in done.err, done.err[-3000:]
    return done.rc, json.loads(done.out), done.err


def findings(result: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(app, detector, rule, resource name, severity) of every finding of every incident."""
    return [
        (a["app"], f["detector"], f["rule"], f["resource"]["name"], f["severity"])
        for a in result["apps"]
        for i in a["incidents"]
        for f in i["findings"]
    ]


def test_a_secret_a_helm_hook_writes_is_no_incident_on_the_untouched_repo(flux: Path) -> None:
    rendered = gitmedic("detect", ".", "--format", "json", cwd=flux, timeout=600)
    mounts = [
        f
        for f in json.loads(rendered.out)["findings"]
        if f["resource"]["name"] == RUNTIME_SECRET and f["detector"] == "missing-reference"
    ]
    assert mounts, "the envoy-gateway Deployment no longer mounts a Secret no file defines"
    head = git(flux, "rev-parse", "HEAD")

    rc, result, err = run_once(flux)

    # exit 1: the podinfo chart's own rollout strategy is a warning (a static finding of
    # the chart's defaults, true of the real chart); nothing the sim ran is an incident
    assert rc in (0, 1), err[-3000:]
    found = findings(result)
    assert [f for f in found if f[4] == "critical" or f[3] == RUNTIME_SECRET] == [], found
    assert {f[1] for f in found} <= {"rollout-strategy-unsafe"}, found
    apps = {a["app"]: a["healthy"] for a in result["apps"]}
    assert apps["envoy-gateway-controllers"] is True, result
    assert prs(flux) == []
    assert git(flux, "rev-parse", "HEAD") == head
    assert git(flux, "status", "--porcelain") == ""
    # sim status sees the loop's world: the pod mounts the Secret and runs
    status = gitmedic(
        "sim",
        "status",
        "infrastructure/controllers",
        "--namespace",
        "envoy-gateway-system",
        "--json",
        cwd=flux,
        timeout=600,
    )
    assert status.rc == 0, status.err[-3000:]
    assert pod_states(json.loads(status.out), RUNTIME_SECRET) == [["running"]]


def pod_states(status: dict[str, Any], workload: str) -> list[list[str]]:
    """The state (``running``, ``waiting``...) of each container of each pod of ``workload``."""
    return [
        [next(iter(cs["state"])) for cs in obj["status"].get("containerStatuses", [])]
        for obj in status["objects"]
        if obj["kind"] == "Pod" and obj["metadata"]["name"].rsplit("-", 2)[0] == workload
    ]


def test_a_secret_removed_from_one_environment_is_still_missing(flux: Path) -> None:
    """A team's change gives production's podinfo a Secret it reads by key; a later
    commit removes that Secret from production alone. The sim finds it missing there
    (some commit defined it), and staging, which never read it, stays as it was."""
    production = flux / "apps/production"
    (production / "podinfo-auth.yaml").write_text(SECRET_BODY)
    kustomization = production / "kustomization.yaml"
    text = kustomization.read_text()
    assert text.count("  - ../base/podinfo\n") == 1
    kustomization.write_text(
        text.replace(
            "  - ../base/podinfo\n", f"  - ../base/podinfo\n  - {SECRET.rsplit('/', 1)[1]}\n"
        )
    )
    values = production / "podinfo-values.yaml"
    values.write_text(values.read_text() + READS)
    commit_all(flux, "podinfo: read the auth token in production")
    staging = git(flux, "rev-parse", "HEAD:apps/staging")
    (production / "podinfo-auth.yaml").unlink()
    kustomization.write_text(text)
    commit_all(flux, "production: drop the auth secret")

    rc, result, err = run_once(flux)

    assert rc == 1, err[-3000:]
    found = findings(result)
    assert ("podinfo-production", "pod-config-error", "secret-missing", "podinfo", "critical") in (
        found
    ), found
    assert [f for f in found if f[0] != "podinfo-production" and f[4] == "critical"] == [], found
    assert git(flux, "rev-parse", "HEAD:apps/staging") == staging
