"""Discovery (``gitmedic init`` with no flags): one app per deployed environment, with why,
and every deployer left out with the reason. Repos written here, in the real shapes."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.manifests.discover import Discovery, Proposal, discover, unique_names

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
"""
CHART = "apiVersion: v2\nname: web\nversion: 0.1.0\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def app(name: str, path: str, namespace: str, **helm: object) -> str:
    values = f"\n      helm: {{valueFiles: {helm['values']}}}" if helm else ""
    return f"""\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  source:
      repoURL: https://example.com/acme/deploy.git
      path: {path}{values}
  destination: {{server: https://kubernetes.default.svc, namespace: {namespace}}}
"""


def by_name(found: Discovery) -> dict[str, Proposal]:
    return dict(zip(unique_names(found.proposals), found.proposals, strict=True))


def reasons(found: Discovery) -> str:
    return "\n".join(f"{o.what}: {o.why}" for o in found.left_out)


def test_an_app_of_apps_is_followed_to_one_app_per_environment(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "root.yaml": app("root", "apps", "argocd"),
            "apps/web-dev.yaml": app("web-dev", "web/overlays/dev", "dev"),
            "apps/web-prod.yaml": app(
                "web-prod", "charts/web", "prod", values="[values-prod.yaml]"
            ),
            "web/base/kustomization.yaml": "resources: [deployment.yaml]\n",
            "web/base/deployment.yaml": DEPLOYMENT,
            "web/overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\n",
            "charts/web/Chart.yaml": CHART,
            "charts/web/values-prod.yaml": "replicas: 2\n",
            "charts/web/templates/deployment.yaml": DEPLOYMENT,
        },
    )
    found = discover(tmp_path)
    apps = by_name(found)
    assert set(apps) == {"web-dev", "web-prod"}
    assert (apps["web-dev"].path, apps["web-dev"].namespace) == ("web/overlays/dev", "dev")
    assert apps["web-dev"].engine == {
        "kind": "argocd-cr",
        "application": "web-dev",
        "namespace": "argocd",
    }
    # a chart: its values are read from the Application in its file (deployed_by)
    assert apps["web-prod"].deployed_by == ("apps/web-prod.yaml", "web-prod")
    assert apps["web-prod"].namespace == "prod"
    assert any("Application root: an app of apps" in note for note in found.notes)


def test_application_sets_are_expanded_where_the_repo_resolves_their_generators(
    tmp_path: Path,
) -> None:
    appset = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://example.com/acme/deploy.git
      directories:
      - path: envs/*
      - {path: envs/scratch, exclude: true}
  - list:
      elements: [{env: qa}]
  - clusters: {}
  template:
    metadata: {name: 'web-{{.path.basename}}'}
    spec:
      source: {repoURL: '{{.repoURL}}', path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
"""
    write(
        tmp_path,
        {
            "appset.yaml": appset,
            "envs/dev/deployment.yaml": DEPLOYMENT,
            "envs/prod/deployment.yaml": DEPLOYMENT,
            "envs/scratch/deployment.yaml": DEPLOYMENT,
        },
    )
    found = discover(tmp_path)
    apps = by_name(found)
    assert set(apps) == {"web-dev", "web-prod"}, "the excluded folder is no app"
    assert (apps["web-prod"].path, apps["web-prod"].namespace) == ("envs/prod", "prod")
    why = reasons(found)
    assert "its clusters generator needs what only the cluster or a provider knows" in why
    assert "names {{.path.basename}}" in why, "the list element has no path: said"


def test_flux_kustomizations_and_helm_releases(tmp_path: Path) -> None:
    kustomization = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: flux-system}}
spec:
  sourceRef: {{kind: {kind}, name: {source}}}
  path: {path}
"""
    release = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: {name}, namespace: {ns}}}
spec:
  chart: {{spec: {{chart: {chart}, sourceRef: {{kind: {kind}, name: {source}}}}}}}
"""

    def ks(name: str, path: str, kind: str = "GitRepository", source: str = "flux-system") -> str:
        return kustomization.format(name=name, path=path, kind=kind, source=source)

    write(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": ks("flux-system", "./clusters/prod"),
            "clusters/prod/apps.yaml": ks("apps", "./apps/prod"),
            "clusters/prod/web.yaml": ks("web", "./web"),
            "clusters/prod/other.yaml": ks("other", "./", "OCIRepository", "other"),
            "apps/prod/kustomization.yaml": "resources: [release.yaml, remote.yaml]\n",
            "apps/prod/release.yaml": release.format(
                name="shop",
                ns="prod",
                chart="./charts/shop",
                kind="GitRepository",
                source="flux-system",
            ),
            "apps/prod/remote.yaml": release.format(
                name="redis", ns="prod", chart="redis", kind="HelmRepository", source="bitnami"
            ),
            "charts/shop/Chart.yaml": CHART,
            "charts/shop/templates/deployment.yaml": DEPLOYMENT,
            "web/deployment.yaml": DEPLOYMENT.replace("name: web}", "name: web, namespace: web}"),
        },
    )
    found = discover(tmp_path)
    apps = by_name(found)
    assert set(apps) == {"shop-prod", "web"}
    assert apps["shop-prod"].deployed_by == ("apps/prod/kustomization.yaml", "shop")
    assert apps["shop-prod"].engine["application"] == "apps"
    assert (apps["web"].path, apps["web"].namespace, apps["web"].cluster) == ("web", "web", "prod")
    why = reasons(found)
    assert "HelmRelease redis takes chart 'redis' from a HelmRepository source" in why
    assert "Flux Kustomization other: its source is OCIRepository other" in why
    assert any("flux-system deploys itself" in note for note in found.notes)


def test_a_flux_artifact_generator_maps_the_kustomization_path_to_the_repo(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "clusters/staging/artifacts.yaml": """\
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: flux-system, namespace: flux-system}
spec:
  sources: [{alias: monorepo, kind: GitRepository, name: flux-system}]
  artifacts:
    - name: apps
      copy:
        - {from: "@monorepo/apps/staging/**", to: "@artifact/staging/"}
""",
            "clusters/staging/apps.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  sourceRef: {kind: ExternalArtifact, name: apps}
  path: ./staging
  targetNamespace: staging
""",
            "apps/staging/deployment.yaml": DEPLOYMENT,
        },
    )
    (proposal,) = discover(tmp_path).proposals
    assert (proposal.path, proposal.namespace) == ("apps/staging", "staging")


def test_without_deployers_apps_come_from_the_folders(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "deploy/base/kustomization.yaml": "resources: [deployment.yaml]\n",
            "deploy/base/deployment.yaml": DEPLOYMENT,
            "deploy/overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\n",
            "deploy/overlays/prod/kustomization.yaml": "namespace: prod\nresources: [../../base]\n",
            "charts/web/Chart.yaml": CHART,
            "charts/web/values-staging.yaml": "replicas: 2\n",
            "charts/web/templates/deployment.yaml": DEPLOYMENT,
            "plain/web/deployment.yaml": DEPLOYMENT.replace(
                "name: web}", "name: web, namespace: plain}"
            ),
            "ci/pipeline.yaml": "stages: [build]\n",
            "remote/kustomization.yaml": "resources: [https://example.com/all.yaml]\n",
        },
    )
    found = discover(tmp_path)
    apps = by_name(found)
    assert set(apps) == {"dev", "prod", "web", "web-staging", "plain"}
    assert (apps["dev"].path, apps["dev"].namespace) == ("deploy/overlays/dev", "dev")
    assert apps["web-staging"].helm == {"values": ["values-staging.yaml"], "release": "web"}
    assert (apps["plain"].path, apps["plain"].namespace) == ("plain", "plain")
    assert any("deploy/base: a kustomize base the overlays include" in n for n in found.notes)
    assert "remote/kustomization.yaml names the remote resources https://" in reasons(found)


def test_names_are_unique_dns_labels_from_the_nearest_folder() -> None:
    proposals = [
        Proposal("Tenants", "apps", "", "tenants/staging"),
        Proposal("Tenants", "apps", "", "tenants/production"),
        Proposal("web_app", "web", "", "web"),
    ]
    assert unique_names(proposals) == ["tenants-staging", "tenants-production", "web-app"]


def test_links_and_hidden_folders_are_not_read(tmp_path: Path) -> None:
    write(tmp_path, {".hidden/deployment.yaml": DEPLOYMENT, "real/deployment.yaml": DEPLOYMENT})
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    assert [p.path for p in discover(tmp_path).proposals] == ["real"]


def test_a_chart_in_a_sub_folder_of_a_chart_is_a_chart_of_its_own(tmp_path: Path) -> None:
    # eks-blueprints-workloads' shape: teams/geordie/dev is a chart whose sub-folder yelb/
    # is another chart (helm renders only templates/ and charts/), which an Application
    # points at; the outer chart's files/ holds YAML that is no deployed object
    write(
        tmp_path,
        {
            "root.yaml": app("yelb", "teams/geordie/dev/yelb", "geordie"),
            "teams/geordie/dev/Chart.yaml": CHART,
            "teams/geordie/dev/templates/deployment.yaml": DEPLOYMENT,
            "teams/geordie/dev/files/deployment.yaml": DEPLOYMENT,
            "teams/geordie/dev/yelb/Chart.yaml": CHART,
            "teams/geordie/dev/yelb/templates/deployment.yaml": DEPLOYMENT,
        },
    )
    apps = by_name(discover(tmp_path))
    assert set(apps) == {"yelb"}
    assert (apps["yelb"].deployed_by, apps["yelb"].namespace) == (("root.yaml", "yelb"), "geordie")
    (tmp_path / "root.yaml").unlink()  # no deployer: proposed from the folders
    folders = {p.path for p in discover(tmp_path).proposals}
    assert folders == {"teams/geordie/dev", "teams/geordie/dev/yelb"}


def test_a_release_says_which_chart_it_renders_and_through_which_kustomization(
    tmp_path: Path,
) -> None:
    """The reason names the chart (a repository's, by name and source; or a folder of this
    repository), and the kustomization that renders the release: never "chart <overlay>"."""
    release = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: podinfo}
spec:
  chart:
    spec: {chart: podinfo, version: 6.x, sourceRef: {kind: HelmRepository, name: podinfo}}
"""
    write(
        tmp_path,
        {
            "clusters/prod/apps.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {sourceRef: {kind: GitRepository, name: flux-system}, path: ./apps/prod}
""",
            "apps/base/release.yaml": release,
            "apps/base/repository.yaml": """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: podinfo}
spec: {url: https://stefanprodan.github.io/podinfo}
""",
            "apps/base/kustomization.yaml": "resources: [release.yaml, repository.yaml]\n",
            "apps/prod/kustomization.yaml": "resources: [../base]\n",
        },
    )

    (proposal,) = discover(tmp_path).proposals

    assert proposal.why == (
        "apps/prod/kustomization.yaml: Flux HelmRelease podinfo renders chart podinfo 6.x "
        "from HelmRepository podinfo/podinfo as the kustomization "
        "apps/prod/kustomization.yaml renders it"
    )
