"""The Lease API of one namespace, through the ``kubernetes`` client's raw calls.

As :mod:`gitmedic.reconciler.live` does, requests are built with
``ApiClient.param_serialize`` and sent with ``call_api``; the body is parsed once
with ``json.loads``, no model classes. 409 is :class:`~.api.LeaseConflict`; any
other status that is not 2xx, a connection failure, or a body that is not a Lease
(list) is :class:`~.api.LeaseApiError` naming the call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gitmedic.reconciler.leases.api import LeaseApiError, LeaseConflict
from gitmedic.reconciler.leases.record import LeaseFormatError, LeaseRecord, from_object, to_object
from gitmedic.reconciler.live import status_message

REQUEST_TIMEOUT_S = 10.0


class KubeLeases:
    def __init__(self, api_client: Any, namespace: str) -> None:
        self.api, self.namespace = api_client, namespace
        self.base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"

    def list(self, selector: str) -> dict[str, LeaseRecord]:
        data = self._call("GET", self.base, query=[("labelSelector", selector)])
        items = data.get("items")
        if not isinstance(items, list):
            raise LeaseApiError(f"listing Leases in {self.namespace}: the answer is not a list")
        try:
            return dict(from_object(item) for item in items)
        except LeaseFormatError as err:
            raise LeaseApiError(f"listing Leases in {self.namespace}: {err}") from None

    def create(self, name: str, record: LeaseRecord) -> LeaseRecord:
        body = to_object(name, self.namespace, record)
        return self._record(name, self._call("POST", self.base, body=body))

    def update(self, name: str, record: LeaseRecord) -> LeaseRecord:
        body = to_object(name, self.namespace, record)
        return self._record(name, self._call("PUT", f"{self.base}/{name}", body=body))

    def _record(self, name: str, data: dict[str, Any]) -> LeaseRecord:
        try:
            written, record = from_object(data)
        except LeaseFormatError as err:
            raise LeaseApiError(f"writing Lease {self.namespace}/{name}: {err}") from None
        if written != name:
            raise LeaseApiError(f"writing Lease {self.namespace}/{name}: answered for {written}")
        return record

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, object]] = (),
        body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        what = f"{method} {path}"
        method, url, headers, raw_body, _ = self.api.param_serialize(
            method,
            path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            response = self.api.call_api(
                method,
                url,
                header_params=headers,
                body=raw_body,
                _request_timeout=REQUEST_TIMEOUT_S,
            )
            raw = response.read()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise LeaseApiError(f"{what}: cannot reach the API server: {exc}"[:300]) from None
        status = int(response.status)
        if status == 409:
            raise LeaseConflict(f"{what}: 409 Conflict (another replica wrote it first)")
        if not 200 <= status < 300:
            raise LeaseApiError(f"{what}: HTTP {status} {status_message(raw)}"[:400])
        try:
            data = json.loads(raw)
        except ValueError:
            raise LeaseApiError(f"{what}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise LeaseApiError(f"{what}: the answer is not an object")
        return data
