"""Where a fix goes for a field no resource file holds as written: the values a commit
changed behind a field its chart's template writes only when asked, and the ``images:``
entry of a kustomization that sets a container's image."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Source
from gitmedic.reconciler.manifests.documents import EditError, values_ref
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.reconciler.manifests.kustomize_images import image_entry, repository
from gitmedic.reconciler.manifests.paths import Match
from gitmedic.reconciler.manifests.rendered import NotEditable, restore_rendered
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.values_behind import values_changed_by
from tests.manifests.helpers import commit_all, init_repo, write

WEB = Resource("Deployment", "team", "web", "apps/v1")
FIELD = ("spec", "template", "spec", "nodeSelector")


def rendered(chart: str) -> Obj:
    source = Source(f"{chart}/templates/web.yaml", 1, renderer="helm", render_root=chart)
    return Obj(WEB, {"kind": "Deployment"}, source)


def chart_repo(tmp_path: Path, config: str = "") -> tuple[Path, str]:
    root = init_repo(tmp_path / "repo")
    write(
        root,
        {
            "teams/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
            "teams/web/values.yaml": "labels: {team: web}\n",
            "envs/dev/values.yaml": "spec:\n  env: dev\n  karpenter:\n  ingress: {type: alb}\n",
            ".gitmedic/config.yaml": config
            or (
                "version: 1\napps:\n  - name: web-dev\n    path: teams/web\n    namespace: team\n"
                "    helm: {values: [../../envs/dev/values.yaml], release: web}\n"
            ),
        },
    )
    return root, commit_all(root, "good")


def test_the_commit_s_values_change_is_undone_key_by_key(tmp_path: Path) -> None:
    root, good = chart_repo(tmp_path)
    values = root / "envs/dev/values.yaml"
    values.write_text(values.read_text().replace("karpenter:", "karpenter: on-demand-profile"))
    bad = commit_all(root, "dev: karpenter")

    edits = values_changed_by(
        ManifestRepo(root, "teams/web", "team"), rendered("teams/web"), FIELD, bad, good
    )

    assert [(e.file, e.resource, e.path) for e in edits] == [
        ("envs/dev/values.yaml", values_ref("envs/dev/values.yaml"), ("spec", "karpenter"))
    ]
    assert edits[0].op is Op.SET and edits[0].value is None


def test_a_key_the_commit_added_is_removed_and_unchanged_files_give_no_edit(
    tmp_path: Path,
) -> None:
    root, good = chart_repo(tmp_path)
    (root / "teams/web/values.yaml").write_text("labels: {team: web}\nnodeSelector: {t: x}\n")
    bad = commit_all(root, "web: pin nodes")

    edits = values_changed_by(
        ManifestRepo(root, "teams/web", "team"), rendered("teams/web"), FIELD, bad, good
    )

    assert [(e.file, e.path, e.op) for e in edits] == [
        ("teams/web/values.yaml", ("nodeSelector",), Op.REMOVE)
    ]


def test_a_values_file_another_environment_renders_differently_is_refused(
    tmp_path: Path,
) -> None:
    config = (
        "version: 1\napps:\n"
        "  - name: web-dev\n    path: teams/web\n    namespace: team\n"
        "    helm: {values: [../../envs/dev/values.yaml], release: web}\n"
        "  - name: other\n    path: teams/other\n    namespace: other\n"
        "    helm: {values: [../../envs/dev/values.yaml], release: other}\n"
    )
    root, _ = chart_repo(tmp_path, config)
    write(
        root,
        {
            "teams/other/Chart.yaml": "apiVersion: v2\nname: other\nversion: 0.1.0\n",
            "teams/other/templates/web.yaml": (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n"
                "    metadata: {labels: {app: web}}\n    spec:\n"
                "      nodeSelector: {zone: a}\n      containers: [{name: web, image: nginx}]\n"
            ),
        },
    )
    good = commit_all(root, "other environment")
    values = root / "envs/dev/values.yaml"
    values.write_text(values.read_text().replace("karpenter:", "karpenter: on-demand-profile"))
    bad = commit_all(root, "dev: karpenter")
    obj = rendered("teams/web")
    obj = Obj(
        obj.ref,
        {"spec": {"template": {"spec": {"nodeSelector": {"type": "karpenter"}}}}},
        obj.source,
    )

    with pytest.raises(EditError, match="also a values file of other"):
        values_changed_by(ManifestRepo(root, "teams/web", "team"), obj, FIELD, bad, good)


def test_a_field_kustomize_did_not_render_from_a_chart_gets_no_values_edit(tmp_path: Path) -> None:
    root, good = chart_repo(tmp_path)
    plain = Obj(WEB, {}, Source("web.yaml", 1, renderer="kustomize", render_root="k.yaml"))

    assert (
        values_changed_by(ManifestRepo(root, "teams/web", "team"), plain, FIELD, good, good) == []
    )


KUSTOMIZATION = """\
resources: [deployment.yaml]
images:
  - name: ghcr.io/stefanprodan/podinfo
    newTag: 6.1.0
  - {name: redis, newName: public.ecr.aws/docker/library/redis, newTag: "7"}
"""


@pytest.mark.parametrize(
    ("declared", "entry"),
    [
        ("ghcr.io/stefanprodan/podinfo:5.0.0", "ghcr.io/stefanprodan/podinfo"),
        ("ghcr.io/stefanprodan/podinfo", "ghcr.io/stefanprodan/podinfo"),
        ("redis:6@sha256:abc", "redis"),
        ("localhost:5000/redis", None),
        ("nginx:1.27", None),
    ],
)
def test_the_images_entry_naming_the_declared_image(declared: str, entry: str | None) -> None:
    expected = ("images", Match("name", entry)) if entry else None
    assert image_entry(KUSTOMIZATION, declared) == expected


def test_an_image_s_repository_keeps_a_registry_port() -> None:
    assert repository("localhost:5000/redis:7") == "localhost:5000/redis"
    assert repository("localhost:5000/redis") == "localhost:5000/redis"
    assert image_entry("images: [", "redis") is None  # no YAML: no entry, never a guess


def test_a_field_another_transformer_makes_is_refused_naming_the_kustomization(
    tmp_path: Path,
) -> None:
    root = init_repo(tmp_path / "repo")
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
        "  template: {spec: {containers: [{name: web, image: 'nginx:1.27'}]}}\n"
    )
    write(root, {"k/deployment.yaml": deployment, "k/kustomization.yaml": KUSTOMIZATION})
    good = commit_all(root, "web")
    body = {"spec": {"replicas": 0, "template": {"spec": {"containers": [{"name": "web"}]}}}}
    source = Source(
        "k/deployment.yaml", 1, renderer="kustomize", render_root="k/kustomization.yaml"
    )
    obj = Obj(Resource("Deployment", "", "web", "apps/v1"), body, source)

    said = re.escape("set by a transformer of k/kustomization.yaml")
    with pytest.raises(NotEditable, match=said):
        restore_rendered(ManifestRepo(root, "k"), obj, [("spec", "replicas")], good)
