"""The chart renders, lints and validates over several value sets, and refuses bad values."""

from __future__ import annotations

import shutil
from pathlib import Path

import kubernetes_validate
import pytest

from tests.chart.conftest import CHART, VALUE_SETS, Helm, objects, one, values_file

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_helm_lint_passes(helm: Helm, value_set: str) -> None:
    result = helm.run("lint", CHART, "--strict", "--values", values_file(value_set))
    assert result.returncode == 0, result.stdout + result.stderr


def test_helm_lint_passes_on_the_defaults(helm: Helm) -> None:
    """The chart's form on its own defaults; what an install needs is checked at install."""
    result = helm.run("lint", CHART, "--strict")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_every_object_validates_strictly(helm: Helm, value_set: str) -> None:
    version = kubernetes_validate.latest_version()
    custom = []
    for obj in helm.render(value_set):
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            custom.append(obj["kind"])
    # Only the prometheus-operator's CRD has no schema in kubernetes-validate.
    assert set(custom) <= {"ServiceMonitor"}


def test_the_value_sets_render_what_they_enable(helm: Helm) -> None:
    kinds = {v: sorted({o["kind"] for o in helm.render(v)}) for v in VALUE_SETS}
    base = [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "NetworkPolicy",
        "Service",
        "ServiceAccount",
    ]
    assert kinds == {
        "app-argocd-cr": sorted([*base, "PersistentVolumeClaim", "Role", "RoleBinding"]),
        "argocd-rest-llm": base,
        "namespaced-ingress": sorted(
            [
                *(k for k in base if not k.startswith("Cluster")),
                "Ingress",
                "PersistentVolumeClaim",
                "Role",
                "RoleBinding",
            ]
        ),
        "replicas-postgres": sorted([*base, "PodDisruptionBudget", "Role", "RoleBinding"]),
        "repos": sorted([*base, "ConfigMap", "PersistentVolumeClaim", "Role", "RoleBinding"]),
        "token-flux-secrets": sorted([*base, "Role", "RoleBinding", "ServiceMonitor"]),
    }


SHOP = ("--set", "github.repository=acme/shop", "--set", "engine.application=shop")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "github.repository (owner/name) is required"),
        (("--set", "github.repository=acme"), "/github/repository': 'acme' does not match pattern"),
        (
            ("--set", "github.repository=acme/shop", "--set", "rbac.readSecret=true"),
            "additional properties 'readSecret' not allowed",
        ),
        (("--set", "github.repository=acme/shop", "--set", "engine.kind=gitlab"), "/engine/kind"),
        ((*SHOP, "--set", "secrets.webhook.name="), "secrets.webhook.name is required"),
        (
            (*SHOP, "--set", "github.appId="),
            "set github.appId (with secrets.githubAppKey) or secrets.githubToken.name",
        ),
        (
            ("--set", "github.repository=acme/shop", "--set", "github.appId=1"),
            "engine.application is required for engine.kind argocd-cr",
        ),
        (
            (*SHOP, "--set", "github.appId=1", "--set", "replicas=2"),
            "replicas 2 needs secrets.journalUrl: the Secret holding a PostgreSQL URL",
        ),
        ((*SHOP, "--set", "replicas=0"), "/replicas': minimum: got 0, want 1"),
    ],
    ids=[
        "no-repository",
        "not-owner-name",
        "typo",
        "unknown-engine",
        "no-webhook-secret",
        "no-credentials",
        "no-application",
        "replicas-without-postgres",
        "no-replica",
    ],
)
def test_bad_values_are_refused_with_the_reason(
    helm: Helm, args: tuple[str, ...], message: str
) -> None:
    result = helm.template(*args)
    assert result.returncode == 1
    assert message in result.stderr
    assert result.stdout == ""


def _notes(helm: Helm, tmp_path: Path, value_set: str) -> str:
    # `helm install --dry-run` wants a cluster; NOTES.txt is rendered here by `tpl`
    # in a copy of the chart, with the release's own values and helpers.
    chart = tmp_path / "gitmedic"
    shutil.copytree(CHART, chart)
    shutil.copy(chart / "templates/NOTES.txt", chart / "notes.txt")
    (chart / "templates/notes.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n"
        'data: {notes: {{ tpl (.Files.Get "notes.txt") . | quote }}}\n'
    )
    result = helm.run(
        "template",
        "gitmedic",
        chart,
        "--namespace",
        "gitmedic",
        "--show-only",
        "templates/notes.yaml",
        "--values",
        values_file(value_set),
    )
    assert result.returncode == 0, result.stderr
    return str(one(objects(result.stdout), "ConfigMap")["data"]["notes"])


def test_notes_show_the_webhook_url(helm: Helm, tmp_path: Path) -> None:
    notes = _notes(helm, tmp_path, "argocd-rest-llm")
    assert 'Webhook URL (the GitHub App\'s "Webhook URL"):\n' in notes
    assert "\n  https://gitmedic.example.com/webhooks/github\n" in notes
    assert "gitmedic-gitmedic" not in notes  # the release named "gitmedic" is not doubled
    assert "and not Secrets (rbac.readSecrets)" in notes
    assert "WARNING" not in notes  # networkPolicy.egress.forge is set


def test_notes_warn_when_the_network_policy_closes_github(helm: Helm, tmp_path: Path) -> None:
    notes = _notes(helm, tmp_path, "app-argocd-cr")
    assert "cannot clone, push or open pull requests yet" in notes
    assert "networkPolicy.egress.forge" in notes
