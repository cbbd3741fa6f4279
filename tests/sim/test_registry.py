"""The sim's registry: every image any commit of the repository names, and only those.

Unit tests of the two parts: reading the images one file names
(:mod:`gitmedic.sim.image_refs`) and the commit set they are read from
(:mod:`gitmedic.sim.registry`). The whole loop over real fixtures is in
tests/bot/test_sim_never_invents.py.
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.image_refs import Parts, references
from gitmedic.sim.registry import KnownImages, canonical, known_images
from tests.bot.cli_world import git


def _images(*files: tuple[str, str]) -> set[str]:
    parts = Parts()
    for name, text in files:
        parts.merge(references(name, text))
    return parts.images()


def test_a_container_image_is_a_full_reference() -> None:
    manifest = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
    manifest += "        - {name: web, image: 'ghcr.io/acme/web:1.2.3'}\n"
    assert _images(("apps/web.yaml", manifest)) == {"ghcr.io/acme/web:1.2.3"}


def test_a_values_repository_and_tag_from_two_files_are_paired_by_their_key() -> None:
    chart = "redis:\n  enabled: false\n  repository: docker.io/redis\n  tag: 8.8.0\n"
    prod = "redis:\n  enabled: true\n  repository: redis\n"
    override = "image:\n  tag: 6.14.2\n"
    base = "image:\n  repository: ghcr.io/stefanprodan/podinfo\n  tag: 6.14.1\n"

    found = _images(("values.yaml", chart + base), ("values-prod.yaml", prod + override))

    assert {"redis:8.8.0", "docker.io/redis:8.8.0"} <= found
    assert {"ghcr.io/stefanprodan/podinfo:6.14.1", "ghcr.io/stefanprodan/podinfo:6.14.2"} <= found


def test_an_empty_tag_defaults_to_the_chart_s_app_version_and_a_registry_prefixes() -> None:
    values = "image:\n  registry: quay.io\n  repository: acme/api\n  tag: ''\n"
    chart = "apiVersion: v2\nname: api\nversion: 0.1.0\nappVersion: '2.4'\n"

    found = _images(("charts/api/values.yaml", values), ("charts/api/Chart.yaml", chart))

    assert {"quay.io/acme/api:2.4", "acme/api:2.4"} <= found


def test_kustomize_and_argo_image_overrides_and_helm_parameters() -> None:
    kustomization = (
        "images:\n  - {name: web, newName: registry.example/web, newTag: v2}\n"
        "  - {name: api, digest: 'sha256:" + "a" * 64 + "'}\n"
        "  - {name: old, newName: registry.example/new}\n"
        "resources: [deploy.yaml]\n"
    )
    deploy = "spec: {containers: [{name: c, image: 'old:3.1'}]}\n"
    argo = (
        "spec:\n  source:\n    kustomize:\n      images: ['db=registry.example/db:15']\n"
        "    helm:\n      parameters:\n        - {name: cache.repository, value: valkey}\n"
        "        - {name: cache.tag, value: '8'}\n"
    )

    files = {"k/kustomization.yaml": kustomization, "k/deploy.yaml": deploy, "argo.yaml": argo}
    found = _images(*files.items())

    assert {
        "registry.example/web:v2",
        "api@sha256:" + "a" * 64,
        "registry.example/new:3.1",
        "registry.example/db:15",
        "valkey:8",
    } <= found


def test_a_template_is_read_line_by_line_and_templated_strings_name_nothing() -> None:
    template = (
        "{{- if .Values.enabled }}\nspec:\n  containers:\n"
        '    - image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n'
        "    - image: busybox:1.36\n{{- end }}\n"
    )
    assert _images(("templates/deploy.yaml", template)) == {"busybox:1.36"}
    assert _images(("env.yaml", "image: ${IMAGE}\n")) == set()


def test_an_alias_bomb_is_walked_once() -> None:
    bomb = "a: &a [x, y]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c]\n"
    assert _images(("bomb.yaml", bomb + "image: nginx:1\n")) == {"nginx:1"}


def test_docker_hub_spellings_are_one_image() -> None:
    assert canonical("docker.io/library/redis:8.8.0") == canonical("redis:8.8.0")
    assert canonical("index.docker.io/bitnami/redis") == "bitnami/redis:latest"
    assert canonical("ghcr.io/library/x:1") == "ghcr.io/library/x:1"
    pinned = KnownImages.of(["busybox:1.38@sha256:" + "b" * 64])
    assert pinned.knows("busybox:1.38") and pinned.knows("busybox@sha256:" + "b" * 64)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "release").mkdir()
    (repo / "app" / "web.yaml").write_text("containers: [{name: web, image: web}]\n")
    (repo / "release" / "web.yaml").write_text("containers: [{image: 'gcr.io/acme/web:v1'}]\n")
    init_repo(repo)
    return repo


def test_the_registry_holds_the_history_up_to_the_base_and_what_later_commits_wrote_elsewhere(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD")
    (repo / "app" / "web.yaml").write_text("containers: [{image: 'gcr.io/acme/web:v9-typo'}]\n")
    (repo / "release" / "web.yaml").write_text("containers: [{image: 'gcr.io/acme/web:v2'}]\n")
    commit_all(repo, "a release elsewhere, and the app's own change")

    known = known_images(repo, [base], None, [":(top)app"])

    assert known.knows("gcr.io/acme/web:v1") and known.knows("web:latest")
    assert known.knows("gcr.io/acme/web:v2")  # written outside the app after the base
    assert not known.knows("gcr.io/acme/web:v9-typo")  # the app's own change is judged
    assert not known_images(repo, [base], None, ["."]).knows("gcr.io/acme/web:v2")


def test_the_registry_is_computed_once_per_commit_set(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = known_images(repo, ["HEAD"], None, [":(top)app"])
    again = known_images(repo / "app", ["main"], "HEAD", [":(top)app"])
    assert again is first and first.blobs == 2
    commit_all(repo, "an empty commit: a new commit set")
    assert known_images(repo, ["HEAD"], None, [":(top)app"]) is not first


def test_outside_a_git_repository_the_registry_is_empty(tmp_path: Path) -> None:
    assert known_images(tmp_path, ["HEAD"], None, []) == KnownImages()


def test_the_catalog_pulls_what_the_registry_knows_and_nothing_else() -> None:
    catalog = ImageCatalog(frozenset({"web:1"})).with_registry(KnownImages.of(["redis:8.8.0"]))
    assert catalog.has_image("web:1") and catalog.has_image("docker.io/library/redis:8.8.0")
    assert not catalog.has_image("redis:8.8.1")
