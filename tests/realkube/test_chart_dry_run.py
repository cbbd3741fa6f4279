"""The Helm chart's objects, rendered with each of the chart tests' value sets, are
accepted by the real API server (``kubectl apply --dry-run=server``: the server's
own schema validation, defaulting and admission, nothing persisted).

The ServiceMonitor is the Prometheus Operator's kind: this cluster has no such
CRD, so the server refuses it for exactly that reason, and everything else is
asserted accepted.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from gitmedic.reconciler.manifests.kustomize import kubectl_path
from tests.chart.conftest import VALUE_SETS, VALUES
from tests.realkube.bot_identity import render_chart
from tests.realkube.conftest import REALKUBE
from tests.realkube.tier import Tier

pytestmark = REALKUBE
NOT_INSTALLED = {"ServiceMonitor"}  # kinds whose CRD this cluster lacks


def dry_run(tier: Tier, objects: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    command = ["apply", "--dry-run=server", "--server-side", "-o", "json", "-f", "-"]
    return subprocess.run(
        [kubectl_path(), "--kubeconfig", str(tier.plane.kubeconfig), *command],
        input=yaml.safe_dump_all(objects),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_the_charts_objects_are_accepted_by_the_real_api_server(
    tier: Tier, namespace: str, value_set: str
) -> None:
    rendered = render_chart(namespace, values=VALUES / f"{value_set}-values.yaml")
    ours = [o for o in rendered if o["kind"] not in NOT_INSTALLED]
    engine = {o["metadata"]["namespace"] for o in ours if o["kind"] == "Role"} - {namespace}
    if engine:  # the engine's namespace (argocd, flux-system), as a cluster with it has
        tier.plane.apply(
            [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in engine]
        )

    done = dry_run(tier, ours)

    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    accepted = answer["items"] if answer.get("kind") == "List" else [answer]
    assert sorted((o["kind"], o["metadata"]["name"]) for o in accepted) == sorted(
        (o["kind"], o["metadata"]["name"]) for o in ours
    )
    deployment = next(o for o in accepted if o["kind"] == "Deployment")
    assert deployment["metadata"].get("uid"), "the server defaulted it (a real dry run)"
    assert tier.plane.kubectl("get", "deployments", "-n", namespace, "-o", "name") == "", (
        "a dry run persists nothing"
    )
    for kind in NOT_INSTALLED & {o["kind"] for o in rendered}:
        refused = dry_run(tier, [o for o in rendered if o["kind"] == kind])
        assert refused.returncode != 0
        assert f'no matches for kind "{kind}"' in refused.stderr, refused.stderr
