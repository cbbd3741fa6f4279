"""Loading desired state from files, folders, kustomizations and git revisions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.load import LoadFailure, load_desired
from tests.conftest import APPS, App, real_apps
from tests.manifests.helpers import CM, commit_all, copy_app, init_repo, write

BOUTIQUE = APPS / "online-boutique"
REPO_ROOT = Path(__file__).resolve().parents[2]


def names(snapshot: Snapshot) -> list[tuple[str, str, str]]:
    return sorted((o.kind, o.namespace, o.name) for o in snapshot)


def test_objects_without_namespace_get_the_given_one_and_cluster_scoped_get_none(
    tmp_path: Path,
) -> None:
    text = "---\n".join(
        [
            CM.format(name="plain"),
            CM.format(name="pinned") + "  namespace: other\n",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
            "metadata:\n  name: reader\n  namespace: ignored\n",
        ]
    )
    write(tmp_path, {"all.yaml": text})
    snap = load_desired(tmp_path / "all.yaml", namespace="shop").snapshot
    assert names(snap) == [
        ("ClusterRole", "", "reader"),
        ("ConfigMap", "other", "pinned"),
        ("ConfigMap", "shop", "plain"),
        ("Namespace", "", "shop"),
    ]
    plain = snap.get("ConfigMap", "shop", "plain")
    assert plain is not None and plain.body["metadata"]["namespace"] == "shop"


def test_default_namespace_is_default(tmp_path: Path) -> None:
    write(tmp_path, {"cm.yaml": CM.format(name="a")})
    assert names(load_desired(tmp_path / "cm.yaml").snapshot) == [("ConfigMap", "default", "a")]


def test_a_known_service_of_online_boutique_is_at_its_line() -> None:
    state = load_desired(BOUTIQUE / "release/kubernetes-manifests.yaml", namespace="boutique")
    frontend = state.snapshot.get("Service", "boutique", "frontend")
    assert frontend is not None and frontend.source is not None
    assert frontend.source.file == "tests/fixtures/data/apps/online-boutique/release/" + (
        "kubernetes-manifests.yaml"
    )
    assert frontend.source.line == 114  # "apiVersion: v1" above "kind: Service"
    assert state.files == [frontend.source.file] and state.errors == []


@pytest.mark.parametrize("app", real_apps(), ids=lambda a: a.name)
def test_every_object_of_every_real_app_points_at_its_own_first_key(app: App) -> None:
    state = load_desired(app.path, namespace=app.namespace)
    assert len(state.snapshot) > 10
    texts: dict[str, list[str]] = {}
    for obj in state.snapshot:
        assert obj.source is not None
        lines = texts.setdefault(
            obj.source.file, (REPO_ROOT / obj.source.file).read_text().splitlines()
        )
        key = lines[obj.source.line - 1].strip().removeprefix("- ").split(":")[0]
        assert key in obj.body, (obj.ref, obj.source)
        following = "\n".join(lines[obj.source.line - 1 : obj.source.line + 60])
        named = rf"""["']?name["']?:\s*["']?{re.escape(obj.name)}["']?\s*,?$"""
        assert re.search(named, following, re.MULTILINE), (obj.ref, obj.source)


@pytest.mark.integration  # helm renders the chart: `make test` builds it
@pytest.mark.usefixtures("helm_on_path")
def test_folder_walk_skips_non_manifests_and_hidden_paths_and_renders_charts(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "app/cm.yaml": CM.format(name="real"),
            "app/nested/more.yml": CM.format(name="nested"),
            "app/settings.yaml": "logLevel: debug\nfeatures: [a, b]\n",
            "app/chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            "app/chart/templates/cm.yaml": "{{- if .Values.x }}\nkind: ConfigMap\n{{- end }}\n",
            "app/.hidden/cm.yaml": CM.format(name="hidden-dir"),
            "app/.hidden.yaml": CM.format(name="hidden-file"),
            "app/README.md": "# not yaml\n",
        },
    )
    state = load_desired(tmp_path / "app")
    assert names(state.snapshot) == [
        ("ConfigMap", "default", "nested"),
        ("ConfigMap", "default", "real"),
    ]
    assert state.errors == []
    # the chart is rendered by helm (its template emits nothing without x), never read as YAML
    assert state.files == ["chart/Chart.yaml", "cm.yaml", "nested/more.yml"]
    assert sorted(state.skipped) == ["settings.yaml"]


def test_a_list_document_in_a_folder_is_an_error_not_a_foreign_file(tmp_path: Path) -> None:
    write(tmp_path, {"d/list.yaml": "- apiVersion: v1\n- kind: ConfigMap\n"})
    errors = load_desired(tmp_path / "d").errors
    assert [(e.file, e.line, e.message) for e in errors] == [
        ("list.yaml", 1, "document 1 is a list, not an object")
    ]


def test_a_named_file_must_be_a_manifest(tmp_path: Path) -> None:
    write(tmp_path, {"settings.yaml": "logLevel: debug\n"})
    errors = load_desired(tmp_path / "settings.yaml").errors
    assert [(e.file, e.line, e.message) for e in errors] == [
        ("settings.yaml", 1, "object has no apiVersion and no kind")
    ]


def test_a_file_that_mixes_objects_and_foreign_documents_reports_them(tmp_path: Path) -> None:
    write(tmp_path, {"d/mixed.yaml": CM.format(name="a") + "---\n- x\n"})
    state = load_desired(tmp_path / "d")
    assert names(state.snapshot) == [("ConfigMap", "default", "a")]
    assert [(e.file, e.line) for e in state.errors] == [("mixed.yaml", 6)]


def test_teastore_folder_with_trailing_tabs_loads_every_file() -> None:
    # teastore-rabbitmq.yaml ends lines 9-11 with a tab (`selector:<TAB>`): libyaml, kubectl
    # and kustomize read it, so gitmedic does too (issue 22; it used to be an error).
    state = load_desired(APPS / "teastore/examples/kubernetes", namespace="teastore")
    assert state.errors == []
    # The folder's variants (ribbon, nodeport, kind...) repeat the same objects: one
    # warning per object, naming each place.
    assert len(state.findings) == 15
    assert {f.detector for f in state.findings} == {"object-variants"}
    loaded = {Path(o.source.file).name for o in state.snapshot if o.source}
    assert {"teastore-clusterip.yaml", "teastore-rabbitmq.yaml"} <= loaded
    assert len(state.files) == 9


def test_a_missing_path_is_a_load_failure(tmp_path: Path) -> None:
    with pytest.raises(LoadFailure, match="no such file or directory"):
        load_desired(tmp_path / "nope")


def test_non_utf8_bytes_are_an_error_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "latin.yaml").write_bytes(
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n"
    )
    errors = load_desired(tmp_path / "latin.yaml").errors
    assert [(e.file, e.line) for e in errors] == [("latin.yaml", 4)]
    assert "not UTF-8" in errors[0].message


# -- git revisions -------------------------------------------------------------------


def test_rev_reads_the_commit_not_the_working_tree(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"apps/shop/cm.yaml": CM.format(name="committed"), "README.md": "x\n"})
    first = commit_all(repo)
    write(repo, {"apps/shop/cm.yaml": CM.format(name="second")})
    commit_all(repo)
    write(repo, {"apps/shop/cm.yaml": CM.format(name="dirty"), "apps/shop/new.yaml": CM})
    before = (repo / "apps/shop/cm.yaml").read_text()

    at_head = load_desired(repo / "apps/shop", rev="HEAD")
    at_first = load_desired(repo / "apps/shop", rev=first)
    work = load_desired(repo / "apps/shop")

    assert names(at_head.snapshot) == [("ConfigMap", "default", "second")]
    assert names(at_first.snapshot) == [("ConfigMap", "default", "committed")]
    assert ("ConfigMap", "default", "dirty") in names(work.snapshot)
    assert at_first.snapshot.revision == first
    obj = next(iter(at_first.snapshot))
    assert obj.source is not None and (obj.source.file, obj.source.line) == ("apps/shop/cm.yaml", 1)
    assert (repo / "apps/shop/cm.yaml").read_text() == before  # nothing checked out


def test_rev_of_a_single_file_and_of_the_whole_repo(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": CM.format(name="a"), "sub/b.yaml": CM.format(name="b")})
    commit_all(repo)
    assert names(load_desired(repo / "sub/b.yaml", rev="HEAD").snapshot) == [
        ("ConfigMap", "default", "b")
    ]
    assert len(load_desired(repo, rev="HEAD").snapshot) == 2


def test_rev_walk_skips_hidden_paths_like_the_working_tree_does(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(
        repo,
        {
            "a.yaml": CM.format(name="a"),
            ".github/workflows/ci.yaml": "on: push\njobs: {}\n",
            ".hidden.yaml": CM.format(name="hidden"),
        },
    )
    commit_all(repo)
    at_rev, work = load_desired(repo, rev="HEAD"), load_desired(repo)
    assert names(at_rev.snapshot) == names(work.snapshot) == [("ConfigMap", "default", "a")]
    assert at_rev.files == work.files == ["a.yaml"]


@pytest.mark.parametrize(
    ("rev", "message"),
    [("no-such-branch", "unknown revision 'no-such-branch'"), ("HEAD~5", "unknown revision")],
)
def test_an_unknown_rev_is_a_load_failure(tmp_path: Path, rev: str, message: str) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": CM.format(name="a")})
    commit_all(repo)
    with pytest.raises(LoadFailure, match=message):
        load_desired(repo, rev=rev)


def test_a_path_absent_at_the_rev_is_a_load_failure(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": CM.format(name="a")})
    commit_all(repo)
    write(repo, {"later/b.yaml": CM.format(name="b")})
    with pytest.raises(LoadFailure, match="later does not exist at revision HEAD"):
        load_desired(repo / "later", rev="HEAD")


def test_rev_outside_a_git_repo_is_a_load_failure(tmp_path: Path) -> None:
    write(tmp_path, {"a.yaml": CM.format(name="a")})
    with pytest.raises(LoadFailure, match="--rev needs a path inside a git repository"):
        load_desired(tmp_path / "a.yaml", rev="HEAD")


# -- kustomize -----------------------------------------------------------------------


def test_kustomize_folder_objects_point_back_to_their_resource_file_and_line() -> None:
    state = load_desired(BOUTIQUE / "kubernetes-manifests", namespace="boutique")
    assert state.errors == []
    base = "tests/fixtures/data/apps/online-boutique/kubernetes-manifests"
    assert state.files == [f"{base}/kustomization.yaml"]
    cart = state.snapshot.get("Service", "boutique", "cartservice")
    redis = state.snapshot.get("Service", "boutique", "redis-cart")
    assert cart is not None and cart.source is not None and redis is not None
    assert (cart.source.file, cart.source.line) == (f"{base}/cartservice.yaml", 69)
    kfile = f"{base}/kustomization.yaml"
    assert redis.source == cart.source.__class__(
        f"{base}/cartservice.yaml", 143, 4, renderer="kustomize", render_root=kfile
    )
    # loadgenerator.yaml is commented out of the kustomization: not rendered.
    assert state.snapshot.get("Deployment", "boutique", "loadgenerator") is None
    assert len(state.snapshot.of_kind("Deployment")) == 11


@pytest.mark.integration
def test_kustomize_at_a_rev_renders_the_commit(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    copy_app(BOUTIQUE / "kubernetes-manifests", repo / "deploy")
    commit_all(repo)
    (repo / "deploy/cartservice.yaml").write_text("")  # working tree differs
    state = load_desired(repo / "deploy", rev="HEAD", namespace="boutique")
    cart = state.snapshot.get("Service", "boutique", "cartservice")
    assert state.errors == []
    assert cart is not None and cart.source is not None
    assert (cart.source.file, cart.source.line) == ("deploy/cartservice.yaml", 69)


def test_a_kustomization_that_fails_to_build_is_an_error_at_the_blamed_line(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "k/kustomization.yaml": "resources:\n  - a.yaml\n  - again.yaml\n",
            "k/a.yaml": CM.format(name="a"),
            "k/again.yaml": CM.format(name="a"),
            "plain/b.yaml": CM.format(name="b"),
        },
    )
    state = load_desired(tmp_path)
    assert [(e.file, e.line) for e in state.errors] == [("k/kustomization.yaml", 3)]
    assert state.errors[0].message.startswith("kustomize build failed:")
    assert "again.yaml" in state.errors[0].message
    assert str(tmp_path) not in state.errors[0].message  # no temp paths leak
    assert names(state.snapshot) == [("ConfigMap", "default", "b")]


def test_generated_objects_point_at_the_kustomization(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "kustomization.yaml": "configMapGenerator:\n  - name: gen\n    literals: [a=b]\n"
            "resources: [cm.yaml]\n",
            "cm.yaml": CM.format(name="declared"),
        },
    )
    state = load_desired(tmp_path)
    sources = {o.name: o.source for o in state.snapshot}
    declared, generated = sources["declared"], next(s for n, s in sources.items() if "gen" in n)
    assert declared is not None and (declared.file, declared.line) == ("cm.yaml", 1)
    assert generated is not None and generated.file == "kustomization.yaml"
