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


def test_one_walk_finds_env_and_argv_lists_nested_in_each_other() -> None:
    """env lists and command/args lists are found in one walk; each kind is still looked
    for inside the other (a custom resource may nest them either way), in document order."""
    body: dict[str, Any] = {
        "kind": "Workflow",
        "spec": {
            "args": ["--token", "argv-t0ken", {"env": [_env("INNER_PASSWORD", "1nner-pass")]}],
            "env": [{"name": "X", "value": "plain", "command": ["--password=in-env-p4ss"]}],
            "steps": [{"env": [_env("DB_SECRET", "st3p-secret")], "command": ["--pw", "st3p-pw"]}],
        },
    }
    # env values first (the spec's own list, then those below it), then argv values; a
    # "--password=v" item is found as a flag and again as text: repeats are allowed.
    assert list(object_credentials(body)) == [
        "1nner-pass",
        "st3p-secret",
        "argv-t0ken",
        "in-env-p4ss",
        "in-env-p4ss",
        "st3p-pw",
    ]
