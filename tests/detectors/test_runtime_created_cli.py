"""A Secret an init container creates at runtime, through the real ``gitmedic detect``.

Argo CD's own manifests (argoproj/argo-cd ``manifests/base/redis``): the ``argocd-redis``
Deployment's init container ``secret-init`` runs ``argocd admin redis-initial-password``,
which creates Secret ``argocd-redis`` that the Deployment and its neighbours read. The
manifests hold no such Secret, yet nothing is certainly missing: a warning naming the
workload that may create it (its ServiceAccount may create secrets), exit 0 under
``--fail-on critical``. Without that permission, no workload of the app is named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.detectors.test_real_shapes_cli import detect, of, summary

pytestmark = pytest.mark.integration

REDIS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: argocd-redis}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: argocd-redis}}
  template:
    metadata: {labels: {app.kubernetes.io/name: argocd-redis}}
    spec:
      serviceAccountName: argocd-redis
      initContainers:
        - name: secret-init
          image: quay.io/argoproj/argocd:v3.1.0
          command: [argocd, admin, redis-initial-password]
      containers:
        - name: redis
          image: redis:7.2
          env:
            - name: REDIS_PASSWORD
              valueFrom: {secretKeyRef: {name: argocd-redis, key: auth}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: argocd-redis}
"""
MAY_CREATE_SECRETS = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: argocd-redis}
rules: [{apiGroups: [""], resources: [secrets], verbs: [get, create]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: argocd-redis}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: argocd-redis}
subjects: [{kind: ServiceAccount, name: argocd-redis}]
"""


def test_a_secret_an_init_container_may_create_is_a_warning_naming_it(tmp_path: Path) -> None:
    code, findings = detect(tmp_path, REDIS, MAY_CREATE_SECRETS)
    assert of(findings, "missing-reference") == [("argocd-redis", "secret-missing", "warning")]
    assert "Deployment/default/argocd-redis may create it" in summary(findings, "missing-reference")
    assert code == 0


def test_without_the_permission_nothing_in_the_app_is_named_its_creator(tmp_path: Path) -> None:
    # a Secret is often made out of band (sealed-secrets, an operator): still a warning,
    # but one that names no workload of the app as its creator
    code, findings = detect(tmp_path, REDIS)
    assert of(findings, "missing-reference") == [("argocd-redis", "secret-missing", "warning")]
    said = summary(findings, "missing-reference")
    assert "may create it" not in said and "created out of band" in said
    assert code == 0
