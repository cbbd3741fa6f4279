"""Flux's post-build substitution: the syntax, the escape, the opt-out marker, the order of
the sources, and what happens when a source cannot be read."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.flux_substitute import (
    PostBuild,
    envsubst,
    post_builds,
    substitute_documents,
    substituted_tree,
)
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.manifests.tree import FsTree
from tests.manifests.helpers import commit_all, init_repo, write


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("v: ${set}", "v: one"),
        ("v: ${unset}", "v: "),
        ("v: ${empty}", "v: "),
        ("v: ${set:=d}", "v: one"),
        ("v: ${unset:=d}", "v: d"),
        ("v: ${empty:=d}", "v: d"),
        ("v: ${empty:-d}", "v: d"),
        ("v: ${unset:-d}", "v: d"),
        ("v: ${empty=d}", "v: "),
        ("v: ${unset=d}", "v: d"),
        ("v: ${empty-d}", "v: "),
        ("v: ${unset-d}", "v: d"),
        ("v: $${set}", "v: ${set}"),
        ("v: a-${set}-${set}", "v: a-one-one"),
        ("v: $set", "v: $set"),  # only the braced form is Flux's
    ],
)
def test_each_form_of_the_syntax(text: str, want: str) -> None:
    assert envsubst(text, {"set": "one", "empty": ""}) == (want, set())


def test_an_unread_source_leaves_what_it_could_give_as_written() -> None:
    text = "a: ${set}\nb: ${maybe}\nc: ${maybe:=d}\nd: $${maybe}\n"
    out, unknown = envsubst(text, {"set": "one"}, complete=False)
    assert out == "a: one\nb: ${maybe}\nc: ${maybe:=d}\nd: ${maybe}\n"
    assert unknown == {"maybe"}


DOCS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: a
data:
  v: ${x}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  labels:
    kustomize.toolkit.fluxcd.io/substitute: disabled
data:
  v: ${x}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}
data:
  v: ${x}
"""


def test_objects_marked_disabled_are_left_as_written_and_lines_stay() -> None:
    build = PostBuild("k", "flux-system", "k.yaml", 1, "", {"x": "X"})
    out, unknown = substitute_documents(DOCS, build)
    assert unknown == set()
    assert out.count("v: X") == 1 and out.count("v: ${x}") == 2
    assert len(out.splitlines()) == len(DOCS.splitlines())


def test_without_any_variable_flux_substitutes_nothing() -> None:
    build = PostBuild("k", "flux-system", "k.yaml", 1, "", {})
    assert substitute_documents("v: ${x:=d}\n", build) == ("v: ${x:=d}\n", set())


KUSTOMIZATION = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  path: ./app
  sourceRef: {{kind: GitRepository, name: flux-system}}
  postBuild:
{post}
"""
APP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  first: "${first}"
  second: "${second}"
  inline: "${inline:=none}"
"""


def config_map(name: str, data: str, kind: str = "ConfigMap") -> str:
    head = f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: flux-system\n"
    return head + data


def loaded(tmp_path: Path, post: str, *extra: tuple[str, str]) -> tuple[dict[str, str], list[str]]:
    """The ConfigMap of ``app/`` as loaded ({} when it is not judged), and the errors."""
    repo = write(
        init_repo(tmp_path / "repo"),
        {"clusters/k.yaml": KUSTOMIZATION.format(post=post), "app/cm.yaml": APP, **dict(extra)},
    )
    state = load_desired(repo / "app")
    errors = [f"{e.file}:{e.line}: {e.message}" for e in state.errors]
    if not list(state.snapshot):
        return {}, errors
    (obj,) = list(state.snapshot)
    data = obj.body["data"]
    assert isinstance(data, dict)
    return data, errors


def test_sources_in_order_then_inline_wins(tmp_path: Path) -> None:
    secret = base64.b64encode(b"from-secret\n").decode()
    post = """    substitute: {inline: "in-line"}
    substituteFrom:
      - {kind: ConfigMap, name: one}
      - {kind: Secret, name: two}
      - {kind: ConfigMap, name: gone, optional: true}"""
    data, errors = loaded(
        tmp_path,
        post,
        ("clusters/one.yaml", config_map("one", "data: {first: a, second: b, inline: c}\n")),
        ("clusters/two.yaml", config_map("two", f"data: {{second: {secret}}}\n", "Secret")),
    )
    assert errors == []
    assert data == {"first": "a", "second": "from-secret", "inline": "in-line"}


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("{kind: Secret, name: kept-elsewhere}", "Secret flux-system/kept-elsewhere (not in"),
        ("{kind: ConfigMap, name: absent}", "ConfigMap flux-system/absent (not in"),
        ("{kind: Secret, name: sealed}", "Secret flux-system/sealed (SOPS-encrypted)"),
    ],
)
def test_an_unreadable_source_is_said_and_its_variables_stay(
    tmp_path: Path, source: str, why: str
) -> None:
    post = f"""    substituteFrom:
      - {{kind: ConfigMap, name: one}}
      - {source}"""
    sealed = config_map("sealed", "data: {second: ENC}\nsops: {version: 3.8.1}\n", "Secret")
    extra = (
        ("clusters/one.yaml", config_map("one", "data: {first: a}\n")),
        ("clusters/sealed.yaml", sealed),
    )
    data, errors = loaded(tmp_path, post, *extra)
    assert data == {}, "an app holding an unknown ${var} is not judged: no false critical"
    unjudged, said = sorted(errors)
    assert said.startswith("clusters/k.yaml:1: Flux Kustomization flux-system/app ")
    assert "${inline}, ${second} in app/cm.yaml" in said and why in said
    assert unjudged.startswith("app:0: the app at app holds Flux variables gitmedic cannot")
    tree = substituted_tree(FsTree(tmp_path / "repo"))
    assert tree.read_text("app/cm.yaml") == APP.replace('"${first}"', '"a"'), "the rest as written"


def test_the_source_nearest_the_kustomization_is_read(tmp_path: Path) -> None:
    post = "    substituteFrom: [{kind: ConfigMap, name: vars}]"
    data, errors = loaded(
        tmp_path,
        post,
        ("clusters/vars.yaml", config_map("vars", "data: {first: mine}\n")),
        ("other/cluster/vars.yaml", config_map("vars", "data: {first: theirs}\n")),
    )
    assert errors == []
    assert data["first"] == "mine"


def test_a_revision_is_read_as_flux_built_it(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(
        repo,
        {
            "clusters/k.yaml": KUSTOMIZATION.format(post="    substitute: {first: '1'}"),
            "app/cm.yaml": APP,
        },
    )
    commit_all(repo, "one")
    (obj,) = list(load_desired(repo / "app", rev="HEAD").snapshot)
    assert obj.body["data"] == {"first": "1", "second": "", "inline": "none"}
    assert obj.source is not None and obj.source.line == 1
    (build,) = post_builds(FsTree(repo))
    assert build.path == "app" and dict(build.variables) == {"first": "1"}


OTHER_REPO = """apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: team, namespace: flux-system}
spec: {url: https://example.com/team/other.git}
"""


@pytest.mark.parametrize(
    ("source", "extra"),
    [
        ("sourceRef: {kind: GitRepository, name: team}", OTHER_REPO),  # another repository
        ("sourceRef: {kind: OCIRepository, name: flux-system}", ""),  # an artifact
        ("", ""),  # no sourceRef: a kustomize patch of a Kustomization, not a deployer
    ],
)
def test_a_kustomization_not_deploying_this_checkout_substitutes_nothing_here(
    tmp_path: Path, source: str, extra: str
) -> None:
    repo = init_repo(tmp_path / "repo")
    kustomization = KUSTOMIZATION.format(post="    substitute: {first: '1'}").replace(
        "  sourceRef: {kind: GitRepository, name: flux-system}", f"  {source}"
    )
    write(repo, {"clusters/k.yaml": kustomization, "clusters/git.yaml": extra, "app/cm.yaml": APP})
    assert post_builds(FsTree(repo)) == []
    (obj,) = list(load_desired(repo / "app").snapshot)
    assert obj.body["data"] == {
        "first": "${first}",
        "second": "${second}",
        "inline": "${inline:=none}",
    }


def test_a_kustomize_root_s_objects_are_substituted_after_the_build(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    post = "    substitute: {first: '1', second: two}"
    write(
        repo,
        {
            "clusters/k.yaml": KUSTOMIZATION.format(post=post),
            "app/kustomization.yaml": "resources: [cm.yaml]\ncommonLabels: {tier: '${second}'}\n",
            "app/cm.yaml": APP,
        },
    )
    (obj,) = list(load_desired(repo / "app").snapshot)
    # kustomize's output drops the quotes of "${first}", so Flux reads 1 as a number
    # (fluxcd/kustomize-controller#1129 documents it): what Flux applies, not what was meant
    assert obj.body["data"] == {"first": 1, "second": "two", "inline": "none"}
    assert obj.body["metadata"]["labels"] == {"tier": "two"}  # type: ignore[index]
    assert obj.source is not None and (obj.source.file, obj.source.line) == ("app/cm.yaml", 1)
