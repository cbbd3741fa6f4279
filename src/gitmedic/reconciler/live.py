"""Live state: a read-only snapshot of a cluster through the ``kubernetes`` client.

Only ``list`` calls are made (the bot's RBAC grants get/list/watch and nothing
else), each with ``_preload_content=False`` so the raw JSON is parsed once by
``json.loads`` instead of being turned into the client's model classes and
back. Items of a list carry no apiVersion/kind in the API; they are filled in
from the list. Secrets are listed as metadata only (PartialObjectMetadata), so
their data never crosses the wire.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import CLUSTER_SCOPED, Mode, Obj, Snapshot


@dataclass(frozen=True)
class ListCall:
    api_version: str
    kind: str
    plural: str

    def path(self, namespace: str | None) -> str:
        group = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if namespace and self.kind not in CLUSTER_SCOPED:
            return f"{group}/namespaces/{namespace}/{self.plural}"
        return f"{group}/{self.plural}"


LIST_CALLS = (
    ListCall("v1", "Pod", "pods"),
    ListCall("v1", "Service", "services"),
    ListCall("v1", "Endpoints", "endpoints"),
    ListCall("v1", "ConfigMap", "configmaps"),
    ListCall("v1", "Secret", "secrets"),
    ListCall("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ListCall("v1", "ServiceAccount", "serviceaccounts"),
    ListCall("v1", "Event", "events"),
    ListCall("v1", "ResourceQuota", "resourcequotas"),
    ListCall("v1", "Node", "nodes"),
    ListCall("apps/v1", "Deployment", "deployments"),
    ListCall("apps/v1", "StatefulSet", "statefulsets"),
    ListCall("apps/v1", "DaemonSet", "daemonsets"),
    ListCall("apps/v1", "ReplicaSet", "replicasets"),
    ListCall("batch/v1", "Job", "jobs"),
    ListCall("batch/v1", "CronJob", "cronjobs"),
    ListCall("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    ListCall("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"),
    ListCall("networking.k8s.io/v1", "Ingress", "ingresses"),
)
METADATA_ONLY = frozenset({"Secret"})
_PARTIAL = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class LiveReadError(Exception):
    """The cluster could not be read (unreachable, unauthorised, or a bad answer)."""


def load_live(
    *, context: str | None = None, namespace: str | None = None, client: Any = None
) -> Snapshot:
    """List every kind detectors read; ``client`` is a configured ``ApiClient`` (tests)."""
    if client is None:
        client = _client(context)
    objects: list[Obj] = []
    for call in LIST_CALLS:
        objects.extend(_list(client, call, namespace))
    return Snapshot(objects, mode=Mode.LIVE)


def _client(context: str | None) -> Any:
    from kubernetes import client, config

    try:
        config.load_kube_config(context=context)
    except Exception:
        try:
            config.load_incluster_config()
        except Exception as exc:
            raise LiveReadError(
                f"no kubeconfig context {context or '(current)'} and not in a cluster: {exc}"
            ) from None
    return client.ApiClient()


def _list(api: Any, call: ListCall, namespace: str | None) -> list[Obj]:
    from kubernetes.client.exceptions import ApiException

    headers = {"Accept": _PARTIAL if call.kind in METADATA_ONLY else "application/json"}
    try:
        response = (
            api.call_api(call.path(namespace), "GET", header_params=headers, _request_timeout=30)
            if _new_style(api)
            else api.call_api(
                call.path(namespace),
                "GET",
                header_params=headers,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=30,
            )
        )
    except ApiException as exc:
        if exc.status == 404:  # an API group the cluster does not serve (old HPA, no CronJob)
            return []
        raise LiveReadError(f"listing {call.plural}: HTTP {exc.status} {exc.reason}") from None
    except Exception as exc:
        raise LiveReadError(f"listing {call.plural}: {exc}") from None
    raw = response.data if hasattr(response, "data") else response[0].data
    try:
        data = json.loads(raw)
    except ValueError:
        raise LiveReadError(f"listing {call.plural}: the answer is not JSON") from None
    return [_obj(item, call) for item in data.get("items") or [] if isinstance(item, dict)]


def _new_style(api: Any) -> bool:
    import inspect

    return "auth_settings" not in inspect.signature(api.call_api).parameters


def _obj(item: dict[str, Any], call: ListCall) -> Obj:
    body = {**item, "apiVersion": call.api_version, "kind": call.kind}
    meta = body.get("metadata") or {}
    ns = "" if call.kind in CLUSTER_SCOPED else str(meta.get("namespace") or "")
    return Obj(Resource(call.kind, ns, str(meta.get("name", "")), call.api_version), body)
