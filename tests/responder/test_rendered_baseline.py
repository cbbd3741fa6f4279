"""A rendered app's findings at a revision are the ones a fix is judged against.

The responder's in-memory gate (``Workspace.check``) accepts a candidate fix
only if no finding appears that HEAD did not have. For a kustomize or Helm app
the candidate is rendered again with the edited files; HEAD's findings must come
from the same render, schema check included, or a finding only the candidate's
render can see (a custom kind reported as not validated) reads as new and every
desired-state fix of the app is refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gitmedic.bot.responder.states import DesiredStates, key
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.conftest import DATA
from tests.manifests.helpers import commit_all, init_repo, write

PODINFO = DATA / "gitops-repos/podinfo/kustomize"
ROUTE = """apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: podinfo
spec:
  parentRefs:
    - name: envoy
  rules:
    - backendRefs:
        - name: podinfo
          port: 9898
"""


def test_head_and_an_in_memory_render_of_it_have_the_same_findings(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    shutil.copytree(PODINFO, repo / "app")
    kustomization = (repo / "app/kustomization.yaml").read_text() + "  - route.yaml\n"
    write(repo, {"app/route.yaml": ROUTE, "app/kustomization.yaml": kustomization})
    head = commit_all(repo, "podinfo with its route")
    states = DesiredStates(ManifestRepo(repo, "app", "podinfo"), builtin_registry())

    at_head = {key(f) for f in states.findings(head)}
    unchanged = {"app/deployment.yaml": (repo / "app/deployment.yaml").read_text()}
    rendered = {key(f) for f in states.findings_of(states.with_files(head, unchanged))}

    assert at_head == rendered
    assert ("schema-invalid", "schema-unknown-kind") in {(d, r) for d, r, _ in at_head}
