"""Adopting gitmedic on real GitOps repositories, as a new user would, through the CLI.

Each fixture (tests/fixtures/data/gitops-repos, with its licence and SOURCE.txt) is
committed to a new repository; ``gitmedic init .`` with no flags lists every
environment it deploys and what it left out; ``detect .`` judges each app on its
own (exit 0 or 1, never "defined twice" across environments); ``run --once`` on
the untouched repository opens no pull request and prints no traceback. A fault
committed into one environment is fixed there, and no file another environment
renders from changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.manifests.helpers import commit_all, git, init_repo
from tests.repos.conftest import Run, gitmedic

FIXTURES = Path(__file__).parents[1] / "fixtures" / "data" / "gitops-repos"
# what init must list (apps) and leave out, naming why, per fixture
EXPECTED = {
    "podinfo": (
        {
            "dev",
            "staging",
            "production",
            "kustomize",
            "podinfo",
            "podinfo-prod",
            "webapp",
            "secure",
        },
        [],
    ),
    # its HelmReleases take charts from a HelmRepository and OCIRepositories the repo
    # declares: each is an environment (pulled when rendered; offline, an error naming
    # the chart, its repository and how to vendor it)
    "flux2-kustomize-helm-example": (
        {
            "infra-configs",
            "podinfo-staging",
            "podinfo-production",
            "cert-manager-controllers",
            "envoy-gateway-controllers",
        },
        [],
    ),
    "flux2-multi-tenancy": (
        {"kyverno-policies", "tenants-staging", "tenants-production"},
        [
            "its source is OCIRepository kyverno-controller",
            "its source GitRepository dev-team is another repository or branch",
        ],
    ),
    "argocd-applicationsets": (
        {"prometheus-operator", "engineering-prod-guestbook"},
        [
            "engineering-dev is no folder of this repository",
            "names the remote resources https://github.com/argoproj/argo-workflows",
            "depends on kube-prometheus-stack 40.5.0 from https://prometheus-community",
        ],
    ),
    # its apps of apps are charts templating Applications (envs/<env>, one per cluster):
    # rendered, and each Application of a team the fixture holds is an app, with the
    # values its chart hands down (``toYaml .Values``) as a values file
    "eks-blueprints-workloads": (
        {"team-riker-dev", "team-riker-test", "team-riker-prod"},
        [
            "envs/dev: a chart templating Argo CD Applications (5 Applications, rendered)",
            "renders chart teams/team-riker/dev with envs/dev/values.yaml",
            "Application team-burnham (rendered from chart envs/dev): its path "
            "teams/team-burnham/dev is no folder of this repository",
        ],
    ),
    # Flux Kustomizations of kustomize folders, and HelmReleases whose charts come from
    # HelmRepositories the repo declares (offline: an error naming how to vendor each)
    "gitops-istio": (
        {
            "apps",
            "flagger",
            "flagger-grafana",
            "istio-base",
            "istiod",
            "istio-gateway-system",
            "istio-gateway-2",
        },
        ["Flux Kustomization istio-system deploys ./istio/system: Flux objects only, followed"],
    ),
}


PULL_HINT = "to render without the network, vendor it into the repository"


def only_offline_pulls(err: str) -> bool:
    """Every error a chart this offline machine cannot pull, naming how to vendor it."""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    return bool(errors) and all("cannot be pulled" in e and PULL_HINT in e for e in errors)


def adopted(tmp_path: Path, fixture: str) -> tuple[Path, Run]:
    repo = init_repo(tmp_path / fixture)
    shutil.copytree(FIXTURES / fixture, repo, dirs_exist_ok=True)
    commit_all(repo, "the team's repository")
    init = gitmedic("init", ".", cwd=repo)
    assert init.rc == 0, init.err
    commit_all(repo, "gitmedic init")
    return repo, init


def acted(repo: Path) -> list[tuple[str, str]]:
    """(name, namespace) of every app init wrote, in order: what run must act on."""
    config = yaml.safe_load((repo / ".gitmedic" / "config.yaml").read_text())
    return [(a["name"], a["namespace"]) for a in config["apps"]]


def prs(repo: Path) -> list[dict[str, object]]:
    listed = gitmedic("prs", repo, "--json")
    assert listed.rc == 0, listed.err
    found: list[dict[str, object]] = json.loads(listed.out)["prs"]
    return found


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_init_detect_and_run_on_the_untouched_repository(tmp_path: Path, fixture: str) -> None:
    repo, init = adopted(tmp_path, fixture)
    apps, left_out = EXPECTED[fixture]
    config = (repo / ".gitmedic" / "config.yaml").read_text()
    for name in apps:
        assert f"  {name}: " in init.out, init.out
        assert f"name: {name}" in config
    assert {name for name, _ in acted(repo)} == apps, "every environment, and only those"
    for reason in left_out:
        assert reason in init.out, init.out
    detect = gitmedic("detect", ".", cwd=repo)
    assert detect.rc in (0, 1) or only_offline_pulls(detect.err), detect.out + detect.err
    assert "defined twice" not in detect.out + detect.err
    run = gitmedic("run", ".", "--once", "--json", cwd=repo, timeout=600)
    assert run.rc in (0, 1), run.err[-3000:]
    assert "Traceback" not in run.err
    (start,) = [line for line in run.err.splitlines() if "gitmedic: starting:" in line]
    undeployable = {
        line.split(":")[1].strip()
        for line in run.err.splitlines()
        if ": cannot deploy it: " in line and PULL_HINT in line
    }
    # every app listed, in the config's order; those the sim cannot deploy marked so
    assert f" {len(apps)} app{'s' * (len(apps) != 1)}: " in start, start
    for app, namespace in acted(repo):
        shown = (
            f"{app} ({namespace}; not deployable: "
            if app in undeployable
            else f"{app} ({namespace})"
        )
        assert shown in start, start
    assert len(run.json().get("apps", [None])) == len(apps)
    assert prs(repo) == [], "nothing was broken: no pull request"


FAULTS = {
    # fixture: (the environment's file, the line as committed, the faulty line)
    "podinfo": (
        "deploy/webapp/backend/deployment.yaml",
        "image: ghcr.io/stefanprodan/podinfo:6.14.1",
        "image: ghcr.io/stefanprodan/podinfo:9.9.9-missing",
    ),
    "argocd-applicationsets": (
        "applicationset/examples/list-generator/guestbook/engineering-prod/"
        "guestbook-ui-deployment.yaml",
        "image: gcr.io/heptio-images/ks-guestbook-demo:0.2",
        "image: gcr.io/heptio-images/ks-guestbook-demo:9.9-missing",
    ),
    # dev turns on Karpenter before its nodes exist: the template writes a nodeSelector only
    # when the value is set, so the fix undoes the value in dev's values, not the template
    "eks-blueprints-workloads": (
        "envs/dev/values.yaml",
        "  karpenterInstanceProfile:\n",
        "  karpenterInstanceProfile: KarpenterNodeInstanceProfile-eks-blueprint\n",
    ),
    # a release no registry has, set where its kustomization's images: transformer sets it
    "gitops-istio": (
        "apps/backend/kustomization.yaml",
        "newTag: 6.1.0",
        "newTag: 9.9.9-missing",
    ),
}


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("fixture", sorted(FAULTS))
def test_a_fault_in_one_environment_is_fixed_there_only(tmp_path: Path, fixture: str) -> None:
    repo, _ = adopted(tmp_path, fixture)
    file, good, bad = FAULTS[fixture]
    text = (repo / file).read_text()
    assert good in text
    (repo / file).write_text(text.replace(good, bad))
    broken = commit_all(repo, "a release nobody pushed")
    run = gitmedic("run", ".", "--once", "--json", cwd=repo, timeout=600)
    assert "Traceback" not in run.err, run.err[-3000:]
    (fix,) = [p for p in prs(repo) if "memory" not in str(p["branch"])]
    assert fix["state"] == "merged", fix
    changed = git(repo, "diff", "--name-only", broken, "main", "--", ".", ":!.gitmedic")
    assert changed.split() == [file], "no file of another environment changed"
    assert good in (repo / file).read_text() or good in git(repo, "show", f"main:{file}")
    fixed = [a for a in run.json()["apps"] if any(i["transactions"] for i in a["incidents"])]
    assert len(fixed) == 1 and fixed[0]["healthy"], fixed
