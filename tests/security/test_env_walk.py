"""Env values are found wherever an object holds an ``env`` list, in document order:
pod templates, CronJob templates, and custom resources that nest containers their own way."""

from __future__ import annotations

from typing import Any

from gitmedic.reconciler.credentials import object_credentials


def _env(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def test_env_lists_at_any_depth_in_document_order() -> None:
    body: dict[str, Any] = {
        "kind": "Workflow",  # a custom resource: no pod template where a Deployment has one
        "spec": {
            "env": [_env("TOP_TOKEN", "t0p-level-token")],
            "templates": [
                {"container": {"env": [_env("DB_PASSWORD", "first-pass")]}},
                [[{"steps": [{"env": [_env("API_KEY", "nested-k3y")]}]}]],
            ],
            "replicas": 3,
            "note": None,
        },
    }
    assert list(object_credentials(body)) == ["t0p-level-token", "first-pass", "nested-k3y"]


def test_an_env_list_inside_an_env_item_is_not_walked_twice() -> None:
    body = {"kind": "Pod", "env": [_env("SECRET_KEY", "0nly-once")], "spec": {"env": "text"}}
    assert list(object_credentials(body)) == ["0nly-once"]
