"""Manifests of the shapes real repositories have, through the real ``gitmedic detect``.

Each class is a minimal file of the real shape (issue 22): list kinds, Argo CD hook
Jobs named by ``generateName``, a plain ``=`` scalar, alternative variants of one
object, kustomize render errors, an overlay outside a git work tree, and a whole
repository of several apps without ``.gitmedic/config.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.manifests.helpers import init_repo, write
from tests.repos.conftest import Run, gitmedic

pytestmark = pytest.mark.integration

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{{containerPort: 8080}}]
          volumeMounts: [{{name: cfg, mountPath: /etc/app}}]
      volumes:
        - name: cfg
          configMap: {{name: {config}}}
"""
SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {{app: {app}}}
  ports: [{{port: 80, targetPort: 8080}}]
"""
CONFIG_MAP_LIST = """apiVersion: v1
kind: ConfigMapList
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: app-config
    data: {level: info}
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: other
"""
RBAC_LISTS = """apiVersion: rbac.authorization.k8s.io/v1
kind: RoleList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: reader}
  rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBindingList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: reader}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
  subjects: [{kind: ServiceAccount, name: default}]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: web}
"""
HOOK_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  generateName: db-migrate-
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: migrate:1.2
          envFrom: [{{configMapRef: {{name: {config}}}}}]
"""
# a CRD whose enum holds a plain `=` (cert-manager's, Prometheus operator's label matchers)
CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: matchers.example.com
spec:
  group: example.com
  names: {kind: Matcher, plural: matchers}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            op:
              type: string
              enum: ['!=', =, =~]
"""


def report(run: Run) -> dict[str, Any]:
    assert "Traceback" not in run.err, run.err
    data: dict[str, Any] = run.json()
    return data


def detectors(data: dict[str, Any]) -> list[str]:
    return [f["detector"] for f in data["findings"] if f["severity"] != "info"]


def test_items_of_every_list_kind_are_objects_at_their_own_line(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "cms.yaml": CONFIG_MAP_LIST,
            "rbac.yaml": RBAC_LISTS,
            "web.yaml": DEPLOY.format(config="app-config"),
        },
    )
    run = gitmedic("detect", tmp_path, "--format", "json")
    data = report(run)
    # the workload mounts a ConfigMap of the ConfigMapList: nothing is missing
    assert (run.rc, data["errors"], detectors(data)) == (0, [], [])
    text = gitmedic("detect", tmp_path)
    assert "in 6 objects from 3 files" in text.out
    # and a name no item has is still missing, at the mount's object and line
    write(tmp_path, {"web.yaml": DEPLOY.format(config="absent")})
    missing = report(gitmedic("detect", tmp_path, "--format", "json"))
    assert detectors(missing) == ["missing-reference"]


def test_a_hook_job_named_by_generate_name_is_read_with_a_stable_identity(
    tmp_path: Path,
) -> None:
    write(tmp_path, {"hook.yaml": HOOK_JOB.format(config="absent"), "cms.yaml": CONFIG_MAP_LIST})
    runs = [gitmedic("detect", tmp_path, "--format", "json") for _ in range(2)]
    first, second = (report(r) for r in runs)
    assert runs[0].rc == 1 and first["errors"] == []
    [finding] = [f for f in first["findings"] if f["detector"] == "missing-reference"]
    assert finding["resource"]["name"] == "db-migrate-"
    assert first == second  # same identity, same fingerprint, run after run
    write(tmp_path, {"hook.yaml": HOOK_JOB.format(config="app-config")})
    clean = gitmedic("detect", tmp_path, "--format", "json")
    assert (clean.rc, report(clean)["errors"]) == (0, [])


def test_two_hook_jobs_of_one_prefix_are_two_objects_not_variants(tmp_path: Path) -> None:
    job = HOOK_JOB.format(config="app-config")
    write(tmp_path, {"hooks.yaml": job + "---\n" + job, "cms.yaml": CONFIG_MAP_LIST})
    run = gitmedic("detect", tmp_path)
    assert run.rc == 0, run.out + run.err
    assert "in 4 objects from 2 files" in run.out


def test_a_plain_equals_scalar_is_a_string_in_files_and_kustomize_apps(tmp_path: Path) -> None:
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ops\ndata:\n  op: =\n"
    write(
        tmp_path,
        {
            "plain/crd.yaml": CRD,
            "plain/ops.yaml": config,
            "kust/kustomization.yaml": "resources:\n- crd.yaml\n- ops.yaml\n",
            "kust/crd.yaml": CRD,
            "kust/ops.yaml": config,
        },
    )
    for app in ("plain", "kust"):
        run = gitmedic("detect", tmp_path / app)
        assert run.rc == 0, run.out + run.err
        assert "in 2 objects from" in run.out and "error" not in run.out + run.err


def test_variants_of_one_object_in_a_plain_folder_are_a_warning_naming_both(
    tmp_path: Path,
) -> None:
    service = SERVICE.format(app="web")
    write(
        tmp_path,
        {
            "deploy/all-in-one.yaml": DEPLOY.format(config="cfg") + "---\n" + service,
            "deploy/deployment.yaml": DEPLOY.format(config="cfg"),
            "deploy/service.yaml": service,
            "deploy/cfg.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n",
        },
    )
    run = gitmedic("detect", tmp_path / "deploy", "--format", "json")
    data = report(run)
    assert (run.rc, data["errors"]) == (1, [])
    variants = [f for f in data["findings"] if f["detector"] == "object-variants"]
    assert [(f["resource"]["kind"], f["severity"]) for f in variants] == [
        ("Deployment", "warning"),
        ("Service", "warning"),
    ]
    assert "at all-in-one.yaml:1, deployment.yaml:1" in variants[0]["summary"]
    assert "at all-in-one.yaml:22, service.yaml:1" in variants[1]["summary"]
    text = gitmedic("detect", tmp_path / "deploy")
    assert "WARNING  object-variants" in text.out and "error" not in text.err


def test_object_variants_is_a_check_like_the_detectors_listed_selected_and_in_sarif(
    tmp_path: Path,
) -> None:
    service = SERVICE.format(app="web")
    write(tmp_path, {"deploy/a.yaml": service, "deploy/b.yaml": service})

    listed = gitmedic("detect", "--list")
    only = report(
        gitmedic("detect", tmp_path / "deploy", "--detector", "object-variants", "--format", "json")
    )
    others = report(
        gitmedic(
            "detect",
            tmp_path / "deploy",
            "--detector",
            "service-selector-unmatched",
            "--format",
            "json",
        )
    )
    sarif = gitmedic("detect", tmp_path / "deploy", "--format", "sarif").json()

    assert "object-variants" in listed.out
    assert {f["detector"] for f in only["findings"]} == {"object-variants"}
    assert "object-variants" not in {f["detector"] for f in others["findings"]}
    [run] = sarif["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    [result] = [r for r in run["results"] if r["ruleId"] == "object-variants"]
    assert rules[result["ruleIndex"]] == "object-variants"


def test_a_kustomize_component_is_no_root_of_its_own(tmp_path: Path) -> None:
    """metrics-server's manifests/components/: a Component patches what an overlay
    including it declares (here none of the walk: a user's overlay elsewhere does);
    built alone it fails ('no matches for Id')."""
    write(
        tmp_path,
        {
            "base/kustomization.yaml": "resources: [deployment.yaml, cfg.yaml]\n",
            "base/deployment.yaml": DEPLOY.format(config="cfg"),
            "base/cfg.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n",
            "components/scale/kustomization.yaml": (
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                "patches: [{path: replicas.yaml}]\n"
            ),
            "components/scale/replicas.yaml": (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                "spec: {replicas: 3}\n"
            ),
            "overlay/kustomization.yaml": ("resources: [../base]\n"),
        },
    )
    data = report(gitmedic("detect", tmp_path, "--format", "json"))
    assert data["errors"] == []


def test_a_failed_build_names_the_base_line_at_fault(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n- cm.yaml\n- gone.yaml\n",
            "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            "prod/kustomization.yaml": "resources:\n- ../base\n",
        },
    )
    init_repo(tmp_path)
    run = gitmedic("detect", tmp_path / "prod", "--format", "json")
    [error] = report(run)["errors"]
    assert run.rc == 2
    assert (error["file"], error["line"]) == ("base/kustomization.yaml", 3)
    assert "gone.yaml" in error["message"]


def test_a_field_of_the_wrong_type_is_blamed_on_its_line_else_on_the_root(tmp_path: Path) -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    write(
        tmp_path,
        {
            "named/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: [not, a, string]\n",
            "named/cm.yaml": cm,
            "vague/kustomization.yaml": "resources:\n- cm.yaml\nreplicas:\n- {name: a, count: x}\n",
            "vague/cm.yaml": cm,
        },
    )
    init_repo(tmp_path)
    named = gitmedic("detect", tmp_path / "named", "--format", "json")
    [error] = report(named)["errors"]
    assert named.rc == 2 and (error["file"], error["line"]) == ("named/kustomization.yaml", 3)
    vague = gitmedic("detect", tmp_path / "vague", "--format", "json")
    [error] = report(vague)["errors"]
    assert vague.rc == 2 and (error["file"], error["line"]) == ("vague/kustomization.yaml", 0)
    assert error["message"].startswith("render error of vague: kustomize build failed")


def overlay_tree(root: Path) -> Path:
    return write(
        root,
        {
            "base/kustomization.yaml": "resources:\n- cm.yaml\n",
            "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
            "overlays/prod/kustomization.yaml": "resources:\n- ../../base\nnamePrefix: prod-\n",
        },
    )


def test_an_overlay_outside_a_git_work_tree_reads_its_base(tmp_path: Path) -> None:
    tree = overlay_tree(tmp_path / "copy")
    prod = tree / "overlays/prod"
    for cwd, path in ((prod, "."), (tmp_path, "copy/overlays/prod")):
        run = gitmedic("detect", path, "--format", "sarif", cwd=cwd)
        assert run.rc == 0, run.out + run.err
    data = report(gitmedic("detect", ".", "--format", "json", cwd=prod))
    assert data["errors"] == []
    text = gitmedic("detect", ".", cwd=prod)
    assert "in 1 objects from 1 file" in text.out


def test_a_base_outside_the_repository_says_why_and_what_to_do(tmp_path: Path) -> None:
    overlay_tree(tmp_path)
    init_repo(tmp_path / "overlays")  # the base is above the repository
    run = gitmedic("detect", tmp_path / "overlays/prod", "--format", "json")
    [error] = report(run)["errors"]
    assert run.rc == 2 and (error["file"], error["line"]) == ("prod/kustomization.yaml", 2)
    assert "'../../base' is outside the repository" in error["message"]
    assert "detect from a clone that holds it" in error["message"]


def overlays_of_one_base(root: Path) -> Path:
    patch = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
    patch += "spec:\n  selector:\n    app: web-v2\n"
    return write(
        root,
        {
            "base/kustomization.yaml": "resources:\n- deploy.yaml\n- svc.yaml\n- cfg.yaml\n",
            "base/deploy.yaml": DEPLOY.format(config="cfg"),
            "base/svc.yaml": SERVICE.format(app="web"),
            "base/cfg.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n",
            "overlays/dev/kustomization.yaml": "resources:\n- ../../base\n",
            "overlays/prod/kustomization.yaml": (
                "resources:\n- ../../base\npatches:\n- path: selector.yaml\n"
            ),
            "overlays/prod/selector.yaml": patch,
        },
    )


def test_overlays_of_one_base_are_separate_apps_evaluated_on_their_own(tmp_path: Path) -> None:
    init_repo(overlays_of_one_base(tmp_path))
    run = gitmedic("detect", tmp_path, "--format", "json")
    data = report(run)
    assert data["errors"] == [] and run.rc == 1
    # prod's patch breaks its Service; dev, rendered from the same base, is fine
    assert detectors(data) == ["service-selector-unmatched"]
    text = gitmedic("detect", tmp_path)
    # two renders (the base is not rendered alone, nor read as loose files)
    assert "from 2 files" in text.out and "defined twice" not in text.out


def test_gitops_objects_split_a_repo_into_the_apps_they_deploy(tmp_path: Path) -> None:
    flux = (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        "metadata: {{name: apps, namespace: flux-system}}\n"
        "spec: {{path: ./apps/{env}, interval: 1h, prune: true,"
        " sourceRef: {{kind: GitRepository, name: flux-system}}}}\n"
    )
    argo = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {{name: web-{env}, namespace: argocd}}\n"
        "spec: {{project: default, destination: {{server: https://kubernetes.default.svc}},"
        " source: {{repoURL: https://example.com/repo.git, path: envs/{env}}}}}\n"
    )
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
    files = {}
    for env in ("staging", "production"):
        files[f"clusters/{env}/apps.yaml"] = flux.format(env=env)
        files[f"apps/{env}/cfg.yaml"] = config
        files[f"argocd/{env}.yaml"] = argo.format(env=env)
        files[f"envs/{env}/web.yaml"] = DEPLOY.format(config="cfg") + "---\n" + config
    init_repo(write(tmp_path, files))
    run = gitmedic("detect", tmp_path, "--format", "json")
    data = report(run)
    assert (run.rc, data["errors"], detectors(data)) == (0, [], [])


@pytest.mark.usefixtures("helm_on_path")
def test_a_finding_points_at_the_app_that_has_it(tmp_path: Path) -> None:
    """A chart and a kustomization of one Deployment name are two apps; the chart's
    finding is located in the chart, not at the kustomization's copy."""
    unsafe = DEPLOY.format(config="cfg").replace(
        "  replicas: 2\n", "  replicas: 1\n  strategy:\n    rollingUpdate: {maxUnavailable: 1}\n"
    )
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
    write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\n",
            "chart/templates/web.yaml": unsafe + "---\n" + config,
            "kustomize/kustomization.yaml": "resources:\n- web.yaml\n",
            "kustomize/web.yaml": DEPLOY.format(config="cfg") + "---\n" + config,
        },
    )
    init_repo(tmp_path)
    run = gitmedic("detect", tmp_path, "--format", "github")
    assert run.rc == 1, run.out + run.err
    [warning] = [line for line in run.out.splitlines() if "rollout-strategy-unsafe" in line]
    assert "file=chart/templates/web.yaml" in warning
