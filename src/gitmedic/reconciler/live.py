"""Live state: a read-only snapshot of a cluster through the ``kubernetes`` client.

Only ``GET`` list calls are made here (the bot's RBAC grants get/list/watch and nothing
else; the watches of the shared cache are :mod:`gitmedic.reconciler.live_watch`'s, the
cache :mod:`gitmedic.reconciler.live_cache`). The client's model classes are bypassed:
each request is built with ``ApiClient.param_serialize`` and sent with
``ApiClient.call_api``, whose response is the raw HTTP body (the v37 equivalent of
``_preload_content=False``), parsed once by ``json.loads``. Items of a list carry no
apiVersion/kind in the API, so they are filled in from the list call. Lists are paged
(``limit`` and ``continue``) so a big namespace never arrives as one giant body. A
continue token outlives its snapshot when etcd compacts the revision it pins (the API
server answers 410 Gone, "the provided continue parameter is too old"): that kind is
listed again from its first page, at most ``RELISTS`` times, so one kind's objects
always come from one consistent revision.

Secrets are listed as ``PartialObjectMetadataList`` (an Accept header asking
the API server for metadata only), so their data never crosses the wire; the
loader also keeps only the metadata of what comes back, and drops the
``last-applied-configuration`` annotation, which holds a copy of the data when
a Secret was created with ``kubectl apply``.

Listing Secrets, even as metadata, needs the ``list`` verb on Secrets, which
also returns their values to anyone who asks without that header; the Helm chart
therefore grants it only on request (``rbac.readSecrets``). A 403 on the Secrets
list is that choice, not a failure: Secrets are skipped (an ``optional`` kind,
below), and the detectors, seeing no Secret at all in a live snapshot, judge no
reference to one; ``detect --live`` says which detectors ran without them.

Failure policy: a 404 for a list outside the core group means the cluster does
not serve that API group/version (no ``autoscaling/v2`` on an old cluster): that
kind is skipped. Anything else that is not a 2xx JSON list (401, 403, 5xx, a
core-group 404, garbage, a connection failure) raises :class:`LiveReadError`
with a message naming the call and the cause. Except for the kinds a read-only
role may rightly leave out (``optional``: Secrets, which some teams never grant
even as metadata, and Nodes, which a namespace-bound role cannot list): a 403
for one of those skips it, and :func:`read_live` returns the refusal
(:class:`ListDenied`) with the snapshot so the caller can say what it did not see.

With a namespace filter only namespaced kinds are listed: a namespace-scoped
view is what a Role-bound (namespace-only) service account can read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import CLUSTER_SCOPED, Mode, Obj, Snapshot
from gitmedic.reconciler.redact import register_objects

PAGE_SIZE = 500
RELISTS = 3  # fresh lists of one kind after its continue token expired (410 Gone)
REQUEST_TIMEOUT_S = 30.0
_JSON = "application/json"
_PARTIAL_METADATA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass(frozen=True)
class ListCall:
    """One kind the snapshot reads, and how to list it."""

    api_version: str
    kind: str
    plural: str
    metadata_only: bool = False
    optional: bool = False  # a 403 skips this kind instead of failing the read

    @property
    def core(self) -> bool:
        return self.api_version == "v1"

    @property
    def cluster_scoped(self) -> bool:
        return self.kind in CLUSTER_SCOPED

    def path(self, namespace: str | None) -> str:
        prefix = "/api/v1" if self.core else f"/apis/{self.api_version}"
        if namespace and not self.cluster_scoped:
            return f"{prefix}/namespaces/{namespace}/{self.plural}"
        return f"{prefix}/{self.plural}"


LIST_CALLS = (
    ListCall("v1", "Pod", "pods"),
    ListCall("v1", "Service", "services"),
    ListCall("v1", "Endpoints", "endpoints"),
    ListCall("v1", "ConfigMap", "configmaps"),
    ListCall("v1", "Secret", "secrets", metadata_only=True, optional=True),
    ListCall("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ListCall("v1", "ServiceAccount", "serviceaccounts"),
    ListCall("v1", "Event", "events"),
    ListCall("v1", "ResourceQuota", "resourcequotas"),
    ListCall("v1", "LimitRange", "limitranges"),
    ListCall("v1", "Node", "nodes", optional=True),
    ListCall("apps/v1", "Deployment", "deployments"),
    ListCall("apps/v1", "StatefulSet", "statefulsets"),
    ListCall("apps/v1", "DaemonSet", "daemonsets"),
    ListCall("apps/v1", "ReplicaSet", "replicasets"),
    ListCall("batch/v1", "Job", "jobs"),
    ListCall("batch/v1", "CronJob", "cronjobs"),
    ListCall("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    ListCall("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"),
    ListCall("networking.k8s.io/v1", "Ingress", "ingresses"),
    # metrics-server's usage (what `kubectl top` reads); a cluster without it answers 404
    ListCall("metrics.k8s.io/v1beta1", "PodMetrics", "pods", optional=True),
)


class LiveReadError(Exception):
    """The cluster could not be read (unreachable, unauthorised, or a bad answer)."""


class ListDenied(LiveReadError):
    """RBAC does not let this identity list one kind (HTTP 403)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def load_live(
    *,
    context: str | None = None,
    namespace: str | None = None,
    kubeconfig: str | None = None,
    api_client: Any = None,
    taken_at: str = "",
) -> Snapshot:
    """List every kind detectors read. ``api_client`` is a configured ``ApiClient``;
    ``taken_at`` (RFC 3339) is when, the detectors' "now" for ages."""
    client = api_client if api_client is not None else connect(context, kubeconfig)
    snapshot, _ = read_live(client, namespace=namespace, taken_at=taken_at)
    return snapshot


def read_live(
    api_client: Any, *, namespace: str | None = None, taken_at: str = ""
) -> tuple[Snapshot, tuple[ListDenied, ...]]:
    """The snapshot, and the optional kinds RBAC refused to list (left out of it)."""
    objects: list[Obj] = []
    denied: list[ListDenied] = []
    for call in LIST_CALLS:
        if namespace and call.cluster_scoped:
            continue
        try:
            objects.extend(obj_of(item, call) for item in _list_all(api_client, call, namespace))
        except ListDenied as refused:
            if not call.optional:
                raise
            denied.append(refused)
    register_objects(o.body for o in objects)  # before any text about them leaves
    return Snapshot(objects, mode=Mode.LIVE, taken_at=taken_at), tuple(denied)


def connect(context: str | None = None, kubeconfig: str | None = None) -> Any:
    """An ``ApiClient`` from the kubeconfig, or the in-cluster service account."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    in_cluster = "KUBERNETES_SERVICE_HOST" in os.environ
    # Read $KUBECONFIG now: the client reads it once, when it is first imported.
    kubeconfig = kubeconfig or os.environ.get("KUBECONFIG") or None
    try:
        return config.new_client_from_config(
            config_file=kubeconfig, context=context, persist_config=False
        )
    except (ConfigException, OSError, ValueError) as exc:
        if context or kubeconfig or not in_cluster:
            where = f"context {context!r}" if context else "the current context"
            raise LiveReadError(f"cannot load kubeconfig ({where}): {exc}") from None
    configuration = client.Configuration()
    try:
        config.load_incluster_config(client_configuration=configuration)
    except ConfigException as exc:
        raise LiveReadError(f"no kubeconfig, and the in-cluster config failed: {exc}") from None
    return client.ApiClient(configuration)


class _ContinueExpired(Exception):
    """The continue token's revision was compacted away (HTTP 410 on a later page)."""


@dataclass(frozen=True)
class Listed:
    """Every item of one kind, and the revision they are at (a watch starts from it)."""

    items: list[Mapping[str, Any]]
    resource_version: str


def list_kind(api: Any, call: ListCall, namespace: str | None) -> Listed | None:
    """One kind from one list (pages of one revision); None when the cluster does not
    serve its API group. Errors as :func:`read_live`'s (a 403 is :class:`ListDenied`)."""
    for _ in range(RELISTS + 1):
        try:
            return _one_list(api, call, namespace)
        except _ContinueExpired:
            continue
    raise LiveReadError(
        f"listing {call.plural}: the list expired (HTTP 410 Gone) {RELISTS + 1} times in a "
        "row; etcd compacts faster than the pages arrive"
    )


def _list_all(api: Any, call: ListCall, namespace: str | None) -> list[Mapping[str, Any]]:
    listed = list_kind(api, call, namespace)
    return listed.items if listed is not None else []


def _one_list(api: Any, call: ListCall, namespace: str | None) -> Listed | None:
    token, version = "", ""
    items: list[Mapping[str, Any]] = []
    while True:
        query: list[tuple[str, object]] = [("limit", PAGE_SIZE)]
        if token:
            query.append(("continue", token))
        page = _get_list(api, call, call.path(namespace), query)
        if page is None:
            return None
        items.extend(item for item in page.get("items") or () if isinstance(item, Mapping))
        metadata = page.get("metadata")
        meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else {}
        version = version or str(meta.get("resourceVersion") or "")
        token = str(meta.get("continue") or "")
        if not token:
            return Listed(items, version)


def _get_list(
    api: Any, call: ListCall, path: str, query: list[tuple[str, object]]
) -> Mapping[str, Any] | None:
    """One page of a list, or None when the cluster does not serve this API group."""
    status, reason, raw = _get(api, call, path, query)
    if status == 404 and not call.core:
        return None
    if status == 410 and any(key == "continue" for key, _ in query):
        raise _ContinueExpired
    if not 200 <= status < 300:
        message = f"listing {call.plural} ({path}): HTTP {status} {_why(reason, raw)}"
        raise ListDenied(message, call.kind) if status == 403 else LiveReadError(message)
    try:
        data = json.loads(raw)
    except ValueError:
        raise LiveReadError(f"listing {call.plural} ({path}): the answer is not JSON") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("items", []), list | None):
        raise LiveReadError(f"listing {call.plural} ({path}): the answer is not a list")
    return data


def _get(
    api: Any, call: ListCall, path: str, query: list[tuple[str, object]]
) -> tuple[int, str, bytes]:
    import urllib3
    from kubernetes.client.exceptions import ApiException

    accept = _PARTIAL_METADATA if call.metadata_only else _JSON
    method, url, headers, _, _ = api.param_serialize(
        "GET",
        path,
        query_params=query,
        header_params={"Accept": accept},
        auth_settings=["BearerToken"],
    )
    try:
        response = api.call_api(
            method, url, header_params=headers, _request_timeout=REQUEST_TIMEOUT_S
        )
        raw = response.read()
    except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
        host = api.configuration.host
        why = first_line(exc)
        raise LiveReadError(f"listing {call.plural}: cannot reach {host}: {why}") from None
    return int(response.status), str(response.reason or ""), bytes(raw or b"")


def _why(reason: str, raw: bytes) -> str:
    """The reason, plus the message of a Kubernetes ``Status`` body when there is one."""
    message = status_message(raw)
    return f"{reason}: {message}" if message else reason


def status_message(raw: bytes, limit: int = 300) -> str:
    """The ``message`` of a Kubernetes ``Status`` body (an API server's error answer), at
    most ``limit`` characters; '' when ``raw`` is no such body (not JSON, not UTF-8, no
    message). The lists, the watches and the Lease calls all say why with it."""
    try:
        body = json.loads(raw)
    except ValueError:  # UnicodeDecodeError too
        return ""
    message = body.get("message") if isinstance(body, Mapping) else None
    return message[:limit] if isinstance(message, str) else ""


def first_line(exc: BaseException) -> str:
    """An error's first line (or its type), at most 300 characters: what a message quotes."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def obj_of(item: Mapping[str, Any], call: ListCall) -> Obj:
    """One listed (or watched) item as the snapshot's object, with its apiVersion and kind."""
    metadata = item.get("metadata")
    meta: Mapping[str, Any] = metadata if isinstance(metadata, Mapping) else {}
    if call.metadata_only:
        annotations = meta.get("annotations")
        if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
            kept = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
            meta = {**meta, "annotations": kept}
        item = {"metadata": meta}
    body = {**item, "apiVersion": call.api_version, "kind": call.kind}
    ns = "" if call.cluster_scoped else str(meta.get("namespace") or "")
    return Obj(Resource(call.kind, ns, str(meta.get("name", "")), call.api_version), body)
