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
import sys
from pathlib import Path

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
MOUNT = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: podinfo
spec:
  values:
    extraEnvs:
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


def run_once(repo: Path) -> tuple[int, dict[str, object], str]:
    done = gitmedic(
        "run", ".", "--cluster", "sim", "--forge", "local", "--once", "--json", cwd=repo
    )
    assert "Traceback" not in done.err, done.err[-3000:]
    return done.rc, json.loads(done.out), done.err


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

    assert rc == 0, (result, err[-3000:])
    assert RUNTIME_SECRET not in json.dumps(result), result
    assert prs(flux) == []
    assert git(flux, "rev-parse", "HEAD") == head
    assert git(flux, "status", "--porcelain") == ""


def test_a_secret_removed_from_one_environment_is_still_missing_and_restored(
    flux: Path,
) -> None:
    print(sys.argv)
