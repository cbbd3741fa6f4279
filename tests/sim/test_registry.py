"""The sim's registry: every image any commit of the repository names, and only those.

Unit tests of the two parts: reading the images one file names
(:mod:`gitmedic.sim.image_refs`) and the commit set they are read from
(:mod:`gitmedic.sim.registry`). The whole loop over real fixtures is in
tests/bot/test_sim_never_invents.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.gitcmd import output as git
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.image_refs import Parts, references
from gitmedic.sim.registry import KnownImages, canonical, known_images


def _known(*files: tuple[str, str]) -> KnownImages:
    parts = Parts()
    for name, text in files:
        parts.merge(references(name, text))
    return KnownImages.from_parts(parts, len(files))


def _knows_all(known: KnownImages, *images: str) -> bool:
    return all(known.knows(i) for i in images)


def test_a_container_image_is_a_full_reference() -> None:
    manifest = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
    manifest += "        - {name: web, image: 'ghcr.io/acme/web:1.2.3'}\n"
    known = _known(("apps/web.yaml", manifest))
    assert known.images == {"ghcr.io/acme/web:1.2.3"} and not known.repository_keys


def test_a_values_repository_and_tag_from_two_files_are_paired_by_their_key() -> None:
    chart = "redis:\n  enabled: false\n  repository: docker.io/redis\n  tag: 8.8.0\n"
    prod = "redis:\n  enabled: true\n  repository: redis\n"
    override = "image:\n  tag: 6.14.2\n"
    base = "image:\n  repository: ghcr.io/stefanprodan/podinfo\n  tag: 6.14.1\n"

    known = _known(("values.yaml", chart + base), ("values-prod.yaml", prod + override))

    assert _knows_all(known, "redis:8.8.0", "docker.io/library/redis:8.8.0")
    assert _knows_all(
        known, "ghcr.io/stefanprodan/podinfo:6.14.1", "ghcr.io/stefanprodan/podinfo:6.14.2"
    )
    assert not known.knows("redis:8.8.1") and not known.knows("ghcr.io/stefanprodan/podinfo:9")


def test_an_empty_tag_defaults_to_the_chart_s_app_version_and_a_registry_prefixes() -> None:
    values = "image:\n  registry: quay.io\n  repository: acme/api\n  tag: ''\n"
    chart = "apiVersion: v2\nname: api\nversion: 0.1.0\nappVersion: '2.4'\n"

    known = _known(("charts/api/values.yaml", values), ("charts/api/Chart.yaml", chart))

    assert _knows_all(known, "quay.io/acme/api:2.4", "acme/api:2.4", "acme/api:latest")
    assert not known.knows("quay.io/acme/api:2.5")


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
    known = _known(*files.items())

    assert _knows_all(
        known,
        "registry.example/web:v2",
        "api@sha256:" + "a" * 64,
        "registry.example/new:3.1",
        "registry.example/db:15",
        "valkey:8",
    )
    assert not known.knows("registry.example/web:v3")


def test_a_template_is_read_line_by_line_and_templated_strings_name_nothing() -> None:
    template = (
        "{{- if .Values.enabled }}\nspec:\n  containers:\n"
        '    - image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n'
        "    - image: busybox:1.36\n{{- end }}\n"
    )
    assert _known(("templates/deploy.yaml", template)).images == {"busybox:1.36"}
    assert _known(("env.yaml", "image: ${IMAGE}\n")).images == set()


def test_an_alias_bomb_is_walked_once() -> None:
    bomb = "a: &a [x, y]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c]\n"
    assert _known(("bomb.yaml", bomb + "image: nginx:1\n")).images == {"nginx:1"}


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


def test_repositories_and_tags_are_paired_when_looked_up_never_multiplied_out() -> None:
    charts = [
        (f"charts/c{n}/values.yaml", f"image:\n  repository: acme/c{n}\n  tag: '{n}.0'\n")
        for n in range(400)
    ]
    known = _known(*charts)
    assert len(known.images) == 0 and len(known.repository_keys) == 400
    assert known.knows("acme/c7:399.0")  # generous: a tag of the same key, from another chart
    assert not known.knows("acme/c7:400.0") and not known.knows("acme/c400:1.0")


def test_a_file_version_over_the_size_limit_is_skipped_and_the_rest_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a-big.yaml").write_text("image: big:1\n" + "# padding\n" * 200)
    (repo / "b-small.yaml").write_text("image: small:1\n")
    init_repo(repo)
    monkeypatch.setattr("gitmedic.sim.registry.MAX_BLOB_BYTES", 100)

    known = known_images(repo, ["HEAD"], None, [":(top)app"])

    assert known.knows("small:1") and not known.knows("big:1")


def test_a_new_head_learns_the_images_committed_since_and_the_same_head_nothing(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    started = known_images(repo, ["HEAD"], None, [":(top)app"])
    (repo / "release" / "web.yaml").write_text("containers: [{image: 'gcr.io/acme/web:v2'}]\n")
    pushed = commit_all(repo, "a release elsewhere, while serve runs")

    assert not started.knows("gcr.io/acme/web:v2")
    assert started.at_head(pushed).knows("gcr.io/acme/web:v2")
    assert started.at_head(started.head) is started
    assert started.at_head("working-tree") is started  # no commit: nothing to learn
    assert KnownImages().at_head(pushed) == KnownImages()  # learned from no repository


def test_apps_of_one_repository_read_its_history_once_and_know_what_a_lone_read_knows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitmedic.sim import registry

    repo = tmp_path / "repo"
    for i in range(4):
        (repo / "apps" / f"a{i}").mkdir(parents=True)
        (repo / "apps" / f"a{i}" / "web.yaml").write_text(f"image: acme/a{i}:1.{i}\n")
    init_repo(repo)
    base = commit_all(repo, "the apps")
    (repo / "apps" / "a3" / "web.yaml").write_text("image: acme/a3:2.0\n")  # later, in a3
    (repo / "apps" / "a0" / "next.yaml").write_text("image: acme/a0:2.0\n")  # later, in a0
    head = commit_all(repo, "two releases")
    reads: list[int] = []
    read = registry.read_blobs
    monkeypatch.setattr(
        registry, "read_blobs", lambda w, b, *a: reads.append(len(b)) or read(w, b, *a)
    )
    registry._known.cache_clear()
    registry._reachable.cache_clear()
    each = [known_images(repo, [base], head, [f":(top)apps/a{i}"]) for i in range(4)]
    assert reads[0] == 4 and sum(reads[1:]) <= 2 * 4, "the history before base: read once"
    assert [k.knows("acme/a3:2.0") for k in each] == [True, True, True, False]
    assert [k.knows("acme/a0:2.0") for k in each] == [False, True, True, True]
    for i, shared in enumerate(each):  # exactly what reading everything for one app gives
        registry._known.cache_clear()
        registry._reachable.cache_clear()
        alone = known_images(repo, [base], head, [f":(top)apps/a{i}"])
        assert (shared.images, shared.blobs) == (alone.images, alone.blobs)
