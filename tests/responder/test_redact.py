"""Secrets never leave the process: structure, content and known values are masked."""

from __future__ import annotations

import logging

import pytest

from gitmedic.reconciler.redact import (
    MASK,
    REGISTRY,
    RedactingFilter,
    redact_object,
    redact_text,
)


@pytest.mark.parametrize(
    "secret",
    [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "sk_live_51Habcdefghijk",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "xoxb-1234567890-abcdefghij",
    ],
)
def test_credential_shaped_values_are_masked_anywhere(secret: str) -> None:
    out = redact_text(f"the value is {secret} today")
    assert secret not in out and MASK in out and out.startswith("the value is")


def test_passwords_in_urls_and_pairs_are_masked() -> None:
    text = "DSN mongodb://admin:hunter22@mongo:27017/db and DB_PASSWORD=hunter22 ok"
    out = redact_text(text)
    assert "hunter22" not in out
    assert "mongodb://admin:****@mongo:27017/db" in out and "DB_PASSWORD=****" in out


def test_objects_lose_secret_values_but_keep_their_shape() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
              "data": {"password": "aHVudGVyMjI="}}  # fmt: skip
    assert redact_object(secret)["data"] == {"password": MASK}
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"env": [
        {"name": "DB_PASSWORD", "value": "hunter22"},
        {"name": "CART_ADDR", "value": "cart:7070"},
    ]}]}}}}  # fmt: skip
    env = redact_object(deployment)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "DB_PASSWORD", "value": MASK},
        {"name": "CART_ADDR", "value": "cart:7070"},
    ]
    config = {"kind": "ConfigMap", "data": {"api_key": "abc123xyz", "feature.fast": "true"}}
    assert redact_object(config)["data"] == {"api_key": MASK, "feature.fast": "true"}


def test_known_values_are_scrubbed_from_logs(caplog: pytest.LogCaptureFixture) -> None:
    REGISTRY.add("plain-looking-value-42")
    logger = logging.getLogger("gitmedic.test.redact")
    logger.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO, logger="gitmedic.test.redact"):
        logger.info("token is %s", "plain-looking-value-42")
    assert "plain-looking-value-42" not in caplog.text and "token is ****" in caplog.text
