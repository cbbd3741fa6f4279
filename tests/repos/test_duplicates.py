"""An object defined twice in one app is kept once and is one warning naming both places
(alternative variants of it, not an error: exit 2 is for what cannot be read)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests.apps import load_apps_desired
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import APPS
from tests.manifests.helpers import CM, init_repo, write
from tests.repos.conftest import gitmedic

DEPLOY = """apiVersion: {api}
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers: [{{name: web, image: nginx}}]
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n"


def test_an_object_in_two_files_is_loaded_once_with_one_warning_naming_both(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "a.yaml": CM.format(name="x") + "---\n" + DEPLOY.format(api="apps/v1"),
            "b.yaml": "# copy\n" + DEPLOY.format(api="apps/v1") + "---\n" + SERVICE,
        },
    )
    state = load_desired(tmp_path, namespace="shop")
    assert sorted(o.kind for o in state.snapshot) == ["ConfigMap", "Deployment", "Service"]
    kept = state.snapshot.get("Deployment", "shop", "web")
    assert kept is not None and kept.source is not None
    assert (kept.source.file, kept.source.line) == ("a.yaml", 6)
    assert state.errors == []
    [variant] = state.findings
    assert (variant.detector, variant.severity.value) == ("object-variants", "warning")
    assert variant.resource == kept.ref
    assert "Deployment/shop/web is defined twice in one app: at a.yaml:6, b.yaml:2" in (
        variant.summary
    )


def test_the_same_name_in_another_group_or_namespace_is_not_a_duplicate(tmp_path: Path) -> None:
    other_group = DEPLOY.format(api="example.com/v1")
    write(
        tmp_path,
        {
            "a.yaml": DEPLOY.format(api="apps/v1") + "---\n" + CM.format(name="web"),
            "b.yaml": CM.format(name="web") + "  namespace: other\n---\n" + other_group,
        },
    )
    state = load_desired(tmp_path, namespace="shop")
    assert state.errors == []
    assert len(state.snapshot) == 4


def test_two_api_versions_of_one_group_are_the_same_object(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"a.yaml": DEPLOY.format(api="apps/v1") + "---\n" + DEPLOY.format(api="apps/v1beta2")},
    )
    state = load_desired(tmp_path)
    assert len(state.snapshot) == 1 and len(state.findings) == 1 and state.errors == []


def test_apps_whose_folders_overlap_count_an_object_once(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitmedic/config.yaml": "version: 1\napps:\n"
            "  - {name: all, path: apps, namespace: shop}\n"
            "  - {name: web, path: apps/web, namespace: shop}\n",
            "apps/web/web.yaml": DEPLOY.format(api="apps/v1"),
        },
    )
    init_repo(tmp_path)
    state = load_apps_desired(tmp_path)
    assert len(state.snapshot) == 1
    # one document read through both apps is one declaration: nothing is ambiguous
    assert state.errors == []


def test_two_declarations_in_overlapping_apps_are_defined_twice(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitmedic/config.yaml": "version: 1\napps:\n"
            "  - {name: all, path: apps, namespace: shop}\n"
            "  - {name: web, path: apps/web, namespace: shop}\n",
            "apps/web/web.yaml": DEPLOY.format(api="apps/v1"),
            "apps/web-copy.yaml": DEPLOY.format(api="apps/v1"),
        },
    )
    init_repo(tmp_path)
    state = load_apps_desired(tmp_path)
    assert len(state.snapshot) == 1
    assert [e.file for e in state.errors if "defined twice" in e.message] == ["apps/web/web.yaml"]


@pytest.mark.integration
def test_online_boutique_from_its_root_has_no_false_double_selection(tmp_path: Path) -> None:
    """The kustomize copy and the release bundle declare every object: counted once."""
    shutil.copytree(APPS / "online-boutique", tmp_path / "boutique")
    run = gitmedic("detect", tmp_path / "boutique", "--namespace", "boutique", "--format", "json")
    report = run.json()
    # the repeats are warnings: which copy a cluster gets is ambiguous, but both are read
    assert run.rc == 1 and report["errors"] == []
    assert not [f for f in report["findings"] if "2 workloads" in f["summary"]]
    variants = [f for f in report["findings"] if f["detector"] == "object-variants"]
    assert {f["severity"] for f in variants} == {"warning"} and len(variants) == 33
    files = {"kubernetes-manifests/frontend.yaml", "release/kubernetes-manifests.yaml"}
    frontend = [f for f in variants if f["resource"]["name"] == "frontend"]
    assert {f["resource"]["kind"] for f in frontend} == {"Deployment", "Service", "ServiceAccount"}
    assert all(set(f["params"]["files"]) == files for f in frontend)
    assert "at kubernetes-manifests/frontend.yaml:15, release/" in frontend[0]["summary"]
