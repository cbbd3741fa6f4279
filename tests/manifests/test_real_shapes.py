"""The parts behind reading real repositories: list kinds, generateName, ``=``, the apps
of a walk, variants, kustomize render errors and an overlay's reach outside git."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Obj, Source
from gitmedic.reconciler.manifests.documents import Chunk
from gitmedic.reconciler.manifests.kustomize_errors import build_error, output_errors
from gitmedic.reconciler.manifests.kustomize_refs import outside_reach
from gitmedic.reconciler.manifests.layout import deployed_folders, owner_folder, plan
from gitmedic.reconciler.manifests.parse import ManifestError, load_strict_yaml, parse_text
from gitmedic.reconciler.manifests.tree import FsTree
from gitmedic.reconciler.manifests.variants import Part, loose_apps, settle
from gitmedic.reconciler.manifests.yaml_loader import ValueAsStrLoader
from tests.manifests.helpers import CM, write

ROLE_LIST = """apiVersion: rbac.authorization.k8s.io/v1
kind: RoleList
metadata: {resourceVersion: ""}
items:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata: {name: a}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata:
      name: b
"""


@pytest.mark.parametrize("kind", ["List", "ConfigMapList", "RoleList", "FooBarList"])
def test_every_list_kind_with_items_is_its_items_each_at_its_line(kind: str) -> None:
    parsed = parse_text(ROLE_LIST.replace("kind: RoleList", f"kind: {kind}"), "r.yaml")
    assert parsed.errors == []
    assert [(o.body["metadata"]["name"], o.line) for o in parsed.objects] == [("a", 5), ("b", 8)]


def test_a_list_kind_without_items_is_one_object_as_before() -> None:
    text = "apiVersion: example.com/v1\nkind: AllowList\nmetadata:\n  name: x\nspec: {}\n"
    [obj] = parse_text(text, "a.yaml").objects
    assert obj.body["kind"] == "AllowList"


def test_generate_name_stands_for_a_missing_name_and_no_name_at_all_is_an_error() -> None:
    hook = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n"
    assert parse_text(hook, "h.yaml").errors == []
    nameless = parse_text("apiVersion: batch/v1\nkind: Job\nmetadata: {labels: {}}\n", "j.yaml")
    [error] = nameless.errors
    assert error.message == "Job has no metadata.name (nor metadata.generateName)"


def test_a_plain_equals_is_a_string_wherever_manifests_are_read() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  op: =\n  ops: ['!=', =]\n"
    )
    [obj] = parse_text(text, "a.yaml").objects
    assert obj.body["data"] == {"op": "=", "ops": ["!=", "="]}
    assert load_strict_yaml("k: =\n", "c.yaml") == {"k": "="}
    assert yaml.load("k: [=]\n", Loader=ValueAsStrLoader) == {"k": ["="]}
    chunk = Chunk(0, tuple(text.splitlines(keepends=True)), 0, 7)
    assert chunk.data()["data"]["op"] == "="
    # anchors take PyYAML's constructor: the same string there
    [anchored] = parse_text(text.replace("op: =", "op: &x =\n  again: *x"), "b.yaml").objects
    assert anchored.body["data"]["again"] == "="


def test_a_base_its_overlays_include_is_no_root_and_its_files_are_not_loose(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n- cm.yaml\n- ../shared/ns.yaml\n",
            "base/cm.yaml": CM.format(name="a"),
            "base/nested/kustomization.yaml": "resources: []\n",
            "shared/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n",
            "shared/other.yaml": CM.format(name="b"),
            "dev/kustomization.yaml": "resources:\n- ../base\n",
            "prod/kustomization.yaml": "resources:\n- ../base/\n",
            "chart/Chart.yaml": "name: c\n",
            "chart/templates/x.yaml": "{{ . }}\n",
            "chart/charts/sub/Chart.yaml": "name: sub\n",
            "notes.txt": "",
        },
    )
    tree = FsTree(tmp_path)
    layout = plan(tree, tree.files(""))
    assert layout.kustomize_roots == ["dev", "prod"]
    assert layout.charts == ["chart"]
    assert layout.loose == ["shared/other.yaml"]


def obj(kind: str, name: str, file: str, line: int = 1, **body: object) -> Obj:
    meta = {"name": name} if not name.endswith("-") else {"generateName": name}
    full = {"apiVersion": "v1", "kind": kind, "metadata": meta, **body}
    return Obj(Resource(kind, "ns", name, "v1"), full, Source(file, line))


def test_gitops_objects_name_the_folders_they_deploy() -> None:
    flux = obj("Kustomization", "apps", "c/apps.yaml", spec={"path": "./apps/prod"})
    flux = Obj(Resource("Kustomization", "ns", "apps", "kustomize.toolkit.fluxcd.io/v1"), flux.body)
    argo = Obj(
        Resource("Application", "argocd", "web", "argoproj.io/v1alpha1"),
        {
            "spec": {
                "sources": [{"path": "envs/dev", "directory": {"recurse": True}}, {"chart": "x"}]
            }
        },
    )
    # a kustomize Kustomization (no group of Flux's) deploys nothing
    other = Obj(Resource("Kustomization", "", "k", "kustomize.config.k8s.io/v1beta1"), flux.body)
    escaping = Obj(argo.ref, {"spec": {"source": {"path": "../elsewhere"}}})
    deployed = deployed_folders([flux, argo, other, escaping], {"apps/prod", "envs/dev", "x"})
    assert deployed == {"apps/prod": True, "envs/dev": True}
    assert owner_folder("envs/dev/a/b.yaml", deployed) == "envs/dev"
    assert owner_folder("envs/other.yaml", deployed) is None
    assert owner_folder("x/a.yaml", {"x": False}) == "x"
    assert owner_folder("x/sub/a.yaml", {"x": False}) is None  # Argo CD: not recursive


def flux_kustomization(name: str, path: str, source: dict[str, str]) -> Obj:
    body = {"spec": {"path": path, "sourceRef": source}}
    return Obj(
        Resource("Kustomization", "flux-system", name, "kustomize.toolkit.fluxcd.io/v1"), body
    )


def git_repository(name: str, url: str, branch: str) -> Obj:
    body = {"spec": {"url": url, "ref": {"branch": branch}}}
    ref = Resource("GitRepository", "flux-system", name, "source.toolkit.fluxcd.io/v1")
    return Obj(ref, body)


def test_a_kustomization_of_another_source_deploys_no_folder_of_this_checkout() -> None:
    folders = {"", "apps", "infra", "team"}
    home = git_repository("flux-system", "ssh://git@github.com/org/fleet.git", "main")
    same = git_repository("fleet", "https://github.com/org/fleet", "main")
    branch = git_repository("team", "https://github.com/org/fleet", "team")
    deployers = [
        flux_kustomization("apps", "./apps", {"kind": "GitRepository", "name": "flux-system"}),
        flux_kustomization("infra", "./infra", {"kind": "GitRepository", "name": "fleet"}),
        flux_kustomization("oci", "./", {"kind": "OCIRepository", "name": "kyverno"}),
        flux_kustomization("bucket", "./", {"kind": "Bucket", "name": "b"}),
        flux_kustomization("team", "./team", {"kind": "GitRepository", "name": "team"}),
    ]
    deployed = deployed_folders([home, same, branch, *deployers], folders)
    assert deployed == {"apps": True, "infra": True}
    # without flux-system's declaration, a declared GitRepository is another checkout
    assert deployed_folders([same, *deployers[1:2]], folders) == {}


def test_a_folder_flux_bootstrap_syncs_is_deployed_with_its_subfolders() -> None:
    files = [
        "clusters/staging/flux-system/gotk-sync.yaml",
        "clusters/staging/apps.yaml",
        "clusters/prod/flux-system/gotk-components.yaml",
        "other/flux-system/kustomization.yaml",  # no bootstrap file: not a cluster root
        "gotk-sync.yaml",  # not in a flux-system folder
    ]
    deployed = deployed_folders([], {"clusters", "clusters/staging", "clusters/prod"}, files)
    assert deployed == {"clusters/prod": True, "clusters/staging": True}
    assert owner_folder("clusters/staging/team/x.yaml", deployed) == "clusters/staging"


def test_loose_folders_split_into_apps_where_they_declare_the_same_objects() -> None:
    apps = loose_apps(
        {
            "clusters/production": [obj("ConfigMap", "flux", "clusters/production/a.yaml")],
            "clusters/staging": [obj("ConfigMap", "flux", "clusters/staging/a.yaml")],
            "shop/backend": [obj("ConfigMap", "api", "shop/backend/a.yaml")],
            "shop/frontend": [obj("ConfigMap", "web", "shop/frontend/a.yaml")],
            "shop/frontend/split": [obj("ConfigMap", "web", "shop/frontend/split/a.yaml")],
        }
    )
    groups = [sorted({o.source.file for o in a.objects if o.source}) for a in apps]
    assert groups == [
        [
            "clusters/production/a.yaml",
            "shop/backend/a.yaml",
            "shop/frontend/a.yaml",
            "shop/frontend/split/a.yaml",  # below the folder it repeats: a variant
        ],
        ["clusters/staging/a.yaml"],
    ]


def test_variants_are_one_warning_per_object_naming_every_place() -> None:
    loose = Part("", [obj("ConfigMap", "a", "x.yaml", 3), obj("ConfigMap", "a", "y.yaml", 9)])
    loose.loose = True
    loose.objects.append(obj("ConfigMap", "b", "z.yaml"))
    undeployed = Part("k", [obj("ConfigMap", "b", "k/b.yaml", 2)])
    deployed = Part("d", [obj("ConfigMap", "a", "d/a.yaml")], deployed=True)
    settled = settle([undeployed, deployed, loose])
    summaries = sorted(f.summary for f in settled.findings)
    assert summaries == [
        "ConfigMap/ns/a is defined twice in one app: at x.yaml:3, y.yaml:9",
        "ConfigMap/ns/b is defined twice in one app: at k/b.yaml:2, z.yaml:1",
    ]
    assert {f.severity.value for f in settled.findings} == {"warning"}
    assert [len(p) for p in settled.parts] == [1, 1, 2]
    assert sorted(o.source.file for o in settled.objects if o.source) == ["d/a.yaml", "k/b.yaml"]


def test_generated_names_of_one_prefix_are_numbered_and_never_variants() -> None:
    hooks = [obj("Job", "migrate-", "h.yaml", 1), obj("Job", "migrate-", "h.yaml", 9)]
    settled = settle([Part("", hooks, loose=True)])
    assert settled.findings == []
    assert [o.name for o in settled.objects] == ["migrate-", "migrate-[2]"]


def test_a_build_error_is_blamed_on_the_innermost_reference(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "base/kustomization.yaml": (
                "resources:\n- cm.yaml  # ok\n- 'gone.yaml'\nnamePrefix: [x]\n"
            ),
            "prod/kustomization.yaml": "resources:\n  - ../base\n",
        },
    )
    tree = FsTree(tmp_path)
    message = "accumulating resources from '../base': from 'gone.yaml': no such file"
    error = build_error(tree, "prod", "prod/kustomization.yaml", message)
    assert (error.file, error.line) == ("base/kustomization.yaml", 3)
    typed = "cannot unmarshal array into Go struct field Kustomization.{} of type string"
    error = build_error(tree, "prod", "prod/kustomization.yaml", typed.format("namePrefix"))
    assert (error.file, error.line) == ("base/kustomization.yaml", 4)  # the one setting it
    both = build_error(tree, "prod", "prod/kustomization.yaml", typed.format("resources"))
    assert (both.file, both.line) == ("prod/kustomization.yaml", 0)  # which one is unknown
    vague = build_error(tree, "prod", "prod/kustomization.yaml", "invalid Kustomization")
    assert (vague.file, vague.line) == ("prod/kustomization.yaml", 0)
    assert vague.message == "render error of prod: kustomize build failed: invalid Kustomization"


def test_unreadable_output_is_traced_to_the_source_file_or_said_plainly(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/kustomization.yaml": "resources:\n- ../shared/cm.yaml\n- ok.yaml\n",
            "app/ok.yaml": CM.format(name="ok"),
            "shared/cm.yaml": CM.format(name="a") + "data:\n  k: v\n  k: w\n",
        },
    )
    tree = FsTree(tmp_path)
    stream = [ManifestError("app/kustomization.yaml", 40, "invalid YAML: something")]
    [traced] = output_errors(tree, "app", "app/kustomization.yaml", stream)
    assert (traced.file, traced.line) == ("shared/cm.yaml", 7)
    assert "kustomize renders it; gitmedic cannot read it" in traced.message
    write(tmp_path, {"shared/cm.yaml": CM.format(name="a")})
    [plain] = output_errors(tree, "app", "app/kustomization.yaml", stream)
    assert (plain.file, plain.line) == ("app/kustomization.yaml", 0)
    assert plain.message == (
        "render error of app: kustomize's output cannot be read "
        "(invalid YAML: something, at line 40 of the rendered output)"
    )


def test_an_overlay_reaches_what_its_kustomizations_name_above_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "repo/base/kustomization.yaml": "resources:\n- ../../common/ns.yaml\n",
            "repo/overlays/prod/kustomization.yaml": (
                "resources:\n- ../../base\n- https://example.com/x.yaml\n- /etc/passwd\n"
            ),
            "repo/overlays/prod/sub/kustomization.yaml": "resources: [../../dev]\n",
        },
    )
    reached = outside_reach(tmp_path / "repo/overlays/prod")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in reached) == [
        "common/ns.yaml",
        "repo/base",
        "repo/overlays/dev",
    ]
    tree, rel = FsTree.around(tmp_path / "repo/overlays/prod", reach=outside_reach)
    assert (tree.root, rel) == (tmp_path.resolve(), "repo/overlays/prod")


def test_a_plain_file_outside_a_repo_reaches_nothing_and_walks_nothing(tmp_path: Path) -> None:
    """detect on /tmp/x.yaml must not walk /tmp (seconds, and strangers' kustomizations)."""
    crowd = tmp_path / "downloads"
    (crowd / "someone/else/overlay").mkdir(parents=True)
    (crowd / "someone/else/overlay/kustomization.yaml").write_text("resources: [../../../../etc]\n")
    (crowd / "mine.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert outside_reach(crowd / "mine.yaml") == []
    tree, rel = FsTree.around(crowd / "mine.yaml", reach=outside_reach)
    assert (tree.root, rel) == (crowd, "mine.yaml")
    kfile = crowd / "someone/else/overlay/kustomization.yaml"
    assert outside_reach(kfile) == [tmp_path / "etc"]  # a kustomization file still reaches
