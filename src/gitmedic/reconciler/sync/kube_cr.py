"""Watchers that read a custom resource through the ``kubernetes`` client:
an Argo CD Application or a Flux Kustomization.

The seam is one method of ``CustomObjectsApi``: ``get_namespaced_custom_object``.
Tests (and other callers) pass any object that has it; ``from_kubeconfig``
builds the real one, importing the client only then. Reads are get-only, within
the bot's read-only RBAC. API errors map as for the REST watcher: 401/403/404 are
Failed (not retried), anything else (5xx, no connection) is Unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from gitmedic.reconciler.clock import Clock, SystemClock
from gitmedic.reconciler.sync.argo_rules import assess_application
from gitmedic.reconciler.sync.flux_rules import assess_kustomization
from gitmedic.reconciler.sync.state import SyncPhase, SyncState


class CustomObjectsReader(Protocol):
    def get_namespaced_custom_object(
        self, group: str, version: str, namespace: str, plural: str, name: str
    ) -> Any: ...


Assess = Callable[[Any, str, float], SyncState]


class CustomResourceWatcher:
    """Reads one custom resource per check and judges it with ``assess``."""

    def __init__(
        self,
        api: CustomObjectsReader,
        *,
        group: str,
        version: str,
        plural: str,
        namespace: str,
        name: str,
        assess: Assess,
        clock: Clock | None = None,
    ) -> None:
        self.api = api
        self.coordinates = (group, version, namespace, plural, name)
        self.assess = assess
        self.clock = clock or SystemClock()

    @property
    def label(self) -> str:
        group, _, namespace, plural, name = self.coordinates
        return f"{plural}.{group} {namespace}/{name}"

    def check(self, sha: str) -> SyncState:
        at = self.clock.now()
        try:
            obj = self.api.get_namespaced_custom_object(*self.coordinates)
        except Exception as err:  # the client raises ApiException, urllib3 errors, ...
            return _api_error(err, self.label, at)
        return self.assess(obj, sha, at)


def argocd_application_watcher(
    api: CustomObjectsReader, name: str, namespace: str = "argocd", clock: Clock | None = None
) -> CustomResourceWatcher:
    return CustomResourceWatcher(
        api,
        group="argoproj.io",
        version="v1alpha1",
        plural="applications",
        namespace=namespace,
        name=name,
        assess=assess_application,
        clock=clock,
    )


def flux_kustomization_watcher(
    api: CustomObjectsReader, name: str, namespace: str = "flux-system", clock: Clock | None = None
) -> CustomResourceWatcher:
    return CustomResourceWatcher(
        api,
        group="kustomize.toolkit.fluxcd.io",
        version="v1",
        plural="kustomizations",
        namespace=namespace,
        name=name,
        assess=assess_kustomization,
        clock=clock,
    )


def from_kubeconfig(context: str | None = None) -> CustomObjectsReader:
    """The real ``CustomObjectsApi`` for a kubeconfig context (or in-cluster config)."""
    from kubernetes import client, config

    try:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    except config.ConfigException:
        config.load_kube_config(context=context)  # type: ignore[no-untyped-call]
    api: CustomObjectsReader = client.CustomObjectsApi()
    return api


def _api_error(err: Exception, label: str, at: float) -> SyncState:
    code = getattr(err, "status", None)
    if code in (401, 403):
        return SyncState(
            SyncPhase.FAILED, f"not allowed to read {label} (HTTP {code}): check RBAC", at=at
        )
    if code == 404:
        return SyncState(SyncPhase.FAILED, f"{label} does not exist", at=at)
    detail = f"HTTP {code}" if isinstance(code, int) else f"{type(err).__name__}: {err}"
    return SyncState(SyncPhase.UNKNOWN, f"could not read {label}: {detail}", at=at)
