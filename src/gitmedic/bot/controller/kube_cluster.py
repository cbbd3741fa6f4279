"""A real cluster as the loop's cluster (``gitmedic run --cluster kube``).

The snapshot is the live loader's (:func:`gitmedic.reconciler.live.load_live`,
read-only list calls on the app's namespace, from ``$KUBECONFIG`` or the
in-cluster service account), or, in a process that keeps watching (``serve``, ``run``
without ``--once``), a view of the cluster's shared watch cache
(:mod:`gitmedic.reconciler.live_cache`: every app of the process reads it, no list per
app per step); time is the system clock. The GitOps engine's
watcher comes from ``engine`` in ``.gitmedic/config.yaml``:

- ``argocd``: Argo CD's REST API at ``engine.url``, with the bearer token read
  from the environment variable named by ``engine.token_env``;
- ``argocd-cr``: the Argo CD Application custom resource, read through the
  kubernetes client;
- ``flux``: the Flux Kustomization custom resource.

Alerts come from ``oracles.alerts_url`` (Alertmanager v2 or Prometheus),
filtered to the app's namespace; an alert source that is down is logged and
counts as no runtime evidence for that interval of the monitor, while the
verification window's alerts oracle (the same source) records it as an Error,
which holds the transaction.

Before the loop starts, :func:`preflight` asks the engine once about the app:
an answer that can only be fixed by a person (a refused token, no such
application) stops the command with that message; a transient one (HTTP 5xx,
unreachable) is reported and the loop carries on, retrying at each poll.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gitmedic.bot.controller.siblings import without_siblings
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.clock import Clock, SystemClock
from gitmedic.reconciler.config import EngineConfig, OracleConfig, ProbeConfig
from gitmedic.reconciler.manifests.kube_version import cluster_version
from gitmedic.reconciler.sync.state import SyncPhase, SyncState, SyncWatcher

if TYPE_CHECKING:
    from gitmedic.reconciler.live_cache import LiveCache
    from gitmedic.reconciler.oracles.alerts import AlertsOracle

log = logging.getLogger(__name__)
_NO_SHA = "0" * 40


class KubeSetupError(ValueError):
    """The cluster or its engine cannot be watched as configured; the message says why."""


class KubeCluster:
    def __init__(
        self,
        namespace: str,
        engine: EngineConfig,
        oracles: OracleConfig,
        env: Mapping[str, str],
        *,
        app: str,
        clock: Clock | None = None,
        cache: LiveCache | None = None,
    ) -> None:
        from gitmedic.reconciler.live import LiveReadError, connect

        self.namespace = namespace
        self.cache = cache  # the cluster's shared watch cache, or None: lists each snapshot
        self.clock: Clock = clock or SystemClock()
        try:
            self.api = connect(env.get("GITMEDIC_KUBE_CONTEXT") or None)
        except LiveReadError as exc:
            raise KubeSetupError(str(exc)) from None
        if cluster_version() is None:  # recorded once per process (record_version_early)
            record_version(self.api)
        self.watcher, self.engine_name = engine_watcher(engine, env, self.api, app, self.clock)
        # Flux reports no per-object health: the live workloads say what still rolls out
        self.rollouts_from_cluster = engine.kind == "flux"
        self.alerts_source = _alerts(oracles, namespace)
        self.denied_kinds: set[str] = set()
        # What the other apps of a shared namespace render: not this app's to see
        self.siblings: frozenset[tuple[str, str]] = frozenset()

    def snapshot(self) -> Snapshot:
        from gitmedic.reconciler.live import read_live

        now = datetime.fromtimestamp(self.clock.now(), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.cache is not None:
            snapshot, denied = self.cache.read(self.namespace, taken_at=now)
        else:
            snapshot, denied = read_live(self.api, namespace=self.namespace, taken_at=now)
        for refused in denied:  # an optional kind RBAC withholds: said once, then left out
            if refused.kind not in self.denied_kinds:
                self.denied_kinds.add(refused.kind)
                log.warning("reading the cluster without the %s kind: %s", refused.kind, refused)
        return without_siblings(snapshot, self.siblings)

    def alerts(self) -> list[dict[str, object]]:
        if self.alerts_source is None:
            return []
        from gitmedic.reconciler.oracles.alerts import AlertSourceError

        try:
            reading = self.alerts_source.measure()
        except AlertSourceError as exc:
            log.warning("alerts unavailable: %s", exc)
            return []
        return [
            {"labels": {"alertname": a.name, **dict(a.labels)}} for a in reading.observation.alerts
        ]

    def alerts_oracle(self) -> AlertsOracle | None:
        """The alert source as an oracle; None when the config names none."""
        return self.alerts_source

    def probe_oracle(self, probe: ProbeConfig) -> None:
        """A live cluster's probes are real HTTP GETs (the checks build them)."""
        return None

    def check(self, sha: str) -> SyncState:
        state = self.watcher.check(sha)
        if not self.rollouts_from_cluster or not state.applied:
            return state
        from gitmedic.reconciler.live import LiveReadError
        from gitmedic.reconciler.sync.live_rollouts import with_live_rollouts

        try:
            snapshot = self.snapshot()
        except LiveReadError as exc:  # not known to have rolled out: not applied yet
            message = f"applied; the rollouts could not be read: {exc}"
            return replace(state, phase=SyncPhase.UNKNOWN, applied=False, message=message)
        return with_live_rollouts(state, (o.body for o in snapshot))


def shared_cache(
    env: Mapping[str, str], namespaces: Iterable[str], *, interval_s: float
) -> LiveCache:
    """The watch cache of the cluster ``env`` names (``GITMEDIC_KUBE_CONTEXT``), started
    for ``namespaces`` stepped every ``interval_s``: the one every app of the process
    reads. Stop it when done."""
    from gitmedic.reconciler.live import LiveReadError, connect
    from gitmedic.reconciler.live_cache import kube_cache

    try:
        api = connect(env.get("GITMEDIC_KUBE_CONTEXT") or None)  # its own connections
    except LiveReadError as exc:
        raise KubeSetupError(str(exc)) from None
    return kube_cache(api, namespaces, interval_s=interval_s)


def record_version_early(env: Mapping[str, str]) -> None:
    """The cluster's version, recorded before any app's manifests are read (the apps of
    a shared namespace render when the apps are set up): none renders for another
    version first. A cluster that cannot be reached is said when its apps connect."""
    from gitmedic.reconciler.live import LiveReadError, connect

    try:
        api = connect(env.get("GITMEDIC_KUBE_CONTEXT") or None)
    except LiveReadError:
        return
    record_version(api)


def record_version(api: Any) -> None:
    """The cluster's version is the one its charts render for (``helm --kube-version``);
    a cluster that does not say keeps the config's or the default, said in the log."""
    from kubernetes.client import VersionApi
    from kubernetes.client.exceptions import OpenApiException
    from urllib3.exceptions import HTTPError

    from gitmedic.reconciler.manifests.kube_version import record_cluster_version

    try:
        answer = str(VersionApi(api).get_code().git_version)
    except (OpenApiException, HTTPError, OSError) as exc:
        log.warning("the cluster's version is unknown (%s): charts render for the config's", exc)
        return
    version = record_cluster_version(answer)
    log.info("charts render for Kubernetes %s, the cluster's version", version or answer)


def engine_watcher(
    engine: EngineConfig, env: Mapping[str, str], api: Any, app: str, clock: Clock
) -> tuple[SyncWatcher, str]:
    """The watcher for ``engine.kind`` and how the PR body names the engine."""
    name = engine.application or app
    if engine.kind == "argocd":
        from gitmedic.reconciler.sync.argocd_rest import ArgoCDRestWatcher

        if not engine.url:
            raise KubeSetupError("engine.kind argocd needs engine.url (the Argo CD server)")
        token = env.get(engine.token_env, "")
        if not token:
            raise KubeSetupError(
                f"engine.kind argocd reads its token from ${engine.token_env}, which is not set"
            )
        watcher = ArgoCDRestWatcher(
            engine.url, name, token, app_namespace=engine.namespace, clock=clock
        )
        return watcher, f"Argo CD (application {name})"
    if engine.kind in ("argocd-cr", "flux"):
        from kubernetes import client

        from gitmedic.reconciler.sync.kube_cr import (
            argocd_application_watcher,
            flux_kustomization_watcher,
        )

        objects = client.CustomObjectsApi(api)
        if engine.kind == "flux":
            ns = engine.namespace or "flux-system"
            return flux_kustomization_watcher(objects, name, ns, clock), f"Flux ({name})"
        ns = engine.namespace or "argocd"
        return argocd_application_watcher(objects, name, ns, clock), f"Argo CD ({name})"
    raise KubeSetupError(
        f"engine.kind {engine.kind!r} cannot watch a real cluster: use argocd, argocd-cr or flux"
    )


def preflight(watcher: SyncWatcher) -> SyncState:
    """Ask the engine once; a FAILED answer (no commit can fix it) is a setup error."""
    state = watcher.check(_NO_SHA)
    if state.phase is SyncPhase.FAILED:
        raise KubeSetupError(f"the GitOps engine cannot be used: {state.message}")
    if state.phase is SyncPhase.UNKNOWN:
        log.warning("the GitOps engine did not answer usefully yet: %s", state.message)
    return state


def _alerts(oracles: OracleConfig, namespace: str) -> AlertsOracle | None:
    if not oracles.alerts_url:
        return None
    from gitmedic.reconciler.oracles.alerts import AlertsOracle, AlertSource

    source = AlertSource(oracles.alerts_api)
    return AlertsOracle(oracles.alerts_url, {"namespace": namespace}, source=source)
