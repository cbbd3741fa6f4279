"""An Argo CD Application's inline Helm values: read as Argo CD renders them, fixed in place.

Teams often keep a few values in the Application itself: ``helm.valuesObject``
(a map), ``helm.values`` (a YAML string) and ``helm.parameters`` (``--set``).
A fault injected there is undone there, in one hunk of the Application
manifest; the chart and its values files stay as they were. A fault inside the
``values`` string escalates, saying why: gitmedic does not edit YAML inside a string.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from gitmedic.reconciler.config import ValuesSource
from gitmedic.reconciler.manifests.deployed_by import DeployerError, read_deployer
from gitmedic.reconciler.manifests.helm_parameters import read_parameters
from tests.conftest import DATA
from tests.manifests.helpers import commit_all, git, init_repo, write
from tests.repos.conftest import CHART_WARNING, fixed_from_history, gitmedic, one_hunk

PODINFO = DATA / "gitops-repos/podinfo/charts/podinfo"
APP_FILE = "argocd/podinfo-prod.yaml"
APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: podinfo-prod
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/team/gitops.git
    path: charts/podinfo
    helm:
      releaseName: podinfo
      valueFiles:
        - values-prod.yaml
%s
  destination:
    server: https://kubernetes.default.svc
    namespace: prod
"""
VALUES_OBJECT = """      valuesObject:
        resources:
          limits:
            memory: 256Mi"""
PARAMETERS = """      parameters:
        - name: image.tag
          value: 6.14.1
        - name: resources.limits.memory
          value: 256Mi"""
VALUES_STRING = """      values: |
        resources:
          limits:
            memory: 256Mi"""
CONFIG = f"version: 1\napps:\n  - name: podinfo\n    deployed_by: {{file: {APP_FILE}}}\n"
HELD = ValuesSource(APP_FILE, "Application", "podinfo-prod", "argocd", ())
AT = ("spec", "source", "helm")


def read(text: str) -> dict[str, str]:
    return {APP_FILE: text}


def test_valuesobject_and_parameters_come_after_the_values_files_in_argo_s_order() -> None:
    text = APPLICATION % f"{VALUES_OBJECT}\n{PARAMETERS}"
    found = read_deployer(read(text).__getitem__, APP_FILE)
    assert found.values == ("values-prod.yaml",)
    assert found.sources == (
        replace(HELD, prefix=(*AT, "valuesObject")),
        replace(HELD, prefix=(*AT, "parameters"), parameters=True),
    )


def test_a_values_string_is_read_but_not_editable() -> None:
    found = read_deployer(read(APPLICATION % VALUES_STRING).__getitem__, APP_FILE)
    assert found.sources == (replace(HELD, prefix=(*AT, "values"), editable=False),)


@pytest.mark.parametrize(
    ("helm", "message"),
    [
        ("      parameters:\n        - {name: 'env[0].name', value: X}", "list or escape syntax"),
        ("      parameters:\n        - {name: tags, value: '{a,b}'}", "list or escape syntax"),
        ("      parameters:\n        - {value: x}", "has no name"),
    ],
)
def test_parameters_helm_would_parse_otherwise_are_refused_by_name(helm: str, message: str) -> None:
    with pytest.raises(DeployerError, match=message):
        read_deployer(read(APPLICATION % helm).__getitem__, APP_FILE)


def test_inline_values_of_a_multi_source_application_are_refused() -> None:
    body = yaml.safe_load(APPLICATION % VALUES_OBJECT)
    body["spec"]["sources"] = [body["spec"].pop("source")]
    with pytest.raises(DeployerError, match=r"of a source in spec\.sources are not read"):
        read_deployer(read(yaml.safe_dump(body)).__getitem__, APP_FILE)


def test_parameters_are_typed_as_helm_types_set_values() -> None:
    node = yaml.compose(
        "- {name: a.b, value: '3'}\n- {name: a.c, value: 'true'}\n- {name: a.d, value: '007'}\n"
        "- {name: a.e, value: '3', forceString: true}\n- {name: 'x\\.y', value: '1.5'}\n"
        "- {name: a.b, value: '4'}\n"
    )
    assert node is not None
    given = read_parameters(node)
    assert given.values == {"a": {"b": 4, "c": True, "d": "007", "e": "3"}, "x.y": "1.5"}
    assert given.lines[("a", "b")] == 6  # the later parameter wins
    assert given.names[("x.y",)] == "x\\.y"


def argo_repo(tmp_path: Path, helm: str) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    shutil.copytree(PODINFO, repo / "charts/podinfo")
    text = APPLICATION % helm
    write(repo, {APP_FILE: text, ".gitmedic/config.yaml": CONFIG})
    init_repo(repo)
    commit_all(repo, "podinfo deployed by Argo CD, some values inline")
    return repo, text


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize(
    ("helm", "old", "new"),
    [
        (VALUES_OBJECT, "memory: 256Mi", "memory: 1Mi"),
        (PARAMETERS, "value: 256Mi", "value: 1Mi"),
    ],
    ids=["valuesObject", "parameters"],
)
def test_a_fault_in_the_application_s_inline_values_is_undone_there(
    tmp_path: Path, helm: str, old: str, new: str
) -> None:
    repo, original = argo_repo(tmp_path, helm)
    (repo / APP_FILE).write_text(original.replace(old, new))
    bad = commit_all(repo, "prod: inline change")
    detect = gitmedic("detect", repo / "charts/podinfo")
    line = next(n for n, text in enumerate(original.splitlines(), 1) if old in text)
    key = "resources.limits.memory"
    assert f"set by {key} at {APP_FILE}:{line}" in detect.out, detect.out

    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    fixed_from_history(run, left=frozenset({CHART_WARNING}))
    assert (repo / APP_FILE).read_text() == original
    changed = git(repo, "diff", "--name-only", bad, "main", "--", ".", ":!.gitmedic")
    assert changed.splitlines() == [APP_FILE]  # the chart and its values files untouched
    assert one_hunk(repo, bad, APP_FILE)


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_a_fault_in_the_application_s_values_string_escalates_saying_why(tmp_path: Path) -> None:
    repo, original = argo_repo(tmp_path, VALUES_STRING)
    (repo / APP_FILE).write_text(original.replace("memory: 256Mi", "memory: 1Mi"))
    bad = commit_all(repo, "prod: tighter memory")
    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once")
    said = run.out + run.err
    assert (
        "is set by resources.limits.memory in the values string spec.source.helm.values of "
        f"Application podinfo-prod ({APP_FILE}:18)"
    ) in said, said[-4000:]
    assert "PR #" not in said
    assert git(repo, "rev-parse", "main") == bad
