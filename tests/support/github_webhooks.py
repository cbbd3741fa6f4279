"""Webhook payloads checked against GitHub's description of them (``@octokit/openapi-webhooks``).

The description is OpenAPI 3.1, so its schemas are JSON Schema 2020-12 as they
stand (a nullable field says ``"type": ["string", "null"]``); loading only makes
every ``$ref`` absolute into the one registered document (cached on disk beside
the package). A delivery names its event in ``X-GitHub-Event`` and, for most
events, its action in the payload: the schema is the webhook ``<event>-<action>``
(dashes for underscores), else ``<event>`` for events without actions (``push``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from tests.support.github_openapi import converted
from tests.support.npm_packages import EXAMPLES, WEBHOOKS, package_file, write_atomically

BASE = "urn:github-webhooks"


class WebhookDescription:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        resource = DRAFT202012.create_resource(document)
        self.registry: Registry[Any] = Registry().with_resource(BASE, resource)

    def webhook(self, event: str, payload: Any) -> str | None:
        """The description's name for this delivery, or ``None`` when it has none."""
        dashed = event.replace("_", "-")
        action = payload.get("action") if isinstance(payload, dict) else None
        for name in (f"{dashed}-{str(action).replace('_', '-')}" if action else None, dashed):
            if name is not None and name in self.document["webhooks"]:
                return name
        return None

    def check(self, event: str, payload: Any) -> list[str]:
        """What in ``payload`` GitHub's description of ``event`` refuses (empty: nothing)."""
        name = self.webhook(event, payload)
        if name is None:
            return [f"{event}: no such webhook in GitHub's description"]
        body = self.document["webhooks"][name]["post"]["requestBody"]
        validator = _validator(self, json.dumps(body["content"]["application/json"]["schema"]))
        errors = sorted(validator.iter_errors(payload), key=lambda e: list(map(str, e.path)))
        return [f"{name}: {e.message} at /{'/'.join(map(str, e.absolute_path))}" for e in errors]


@functools.lru_cache(maxsize=256)
def _validator(description: WebhookDescription, schema: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema), registry=description.registry)


@functools.cache
def webhook_description() -> WebhookDescription:
    name = "generated/api.github.com.json"
    cache = WEBHOOKS.folder / (name + ".resolved.json")
    if not cache.is_file():
        source = json.loads(package_file(WEBHOOKS, name).read_text())
        document = {
            "webhooks": converted(source["webhooks"], BASE),
            "components": converted(source["components"], BASE),
        }
        write_atomically(cache, json.dumps(document))
    return WebhookDescription(json.loads(cache.read_text()))


@functools.cache
def real_examples() -> dict[str, list[dict[str, Any]]]:
    """``@octokit/webhooks-examples``: real payloads GitHub sent, by event."""
    index = json.loads(package_file(EXAMPLES, "api.github.com/index.json").read_text())
    return {str(entry["name"]): list(entry["examples"]) for entry in index}
