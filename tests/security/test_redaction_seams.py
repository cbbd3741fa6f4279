"""Structural redaction, one seam at a time: which values are credentials, and each sink's scrub.

The subprocess test (:mod:`.test_redaction_sinks`) traces planted secrets through
a whole run; these pin the parts: what :func:`object_credentials` finds (and what
it leaves alone), the forms a registered value is masked in, and that every
forge adapter, the provider call, the model's output and the process's streams
go through the scrubber.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from gitmedic.bot.forges.github import GitHubForge
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.responder.llm import Budget, Tool, run_agent
from gitmedic.reconciler.credentials import object_credentials, text_credentials
from gitmedic.reconciler.outbound import OUTBOUND_TEXT, SCRUBBED, ScrubbingStream
from gitmedic.reconciler.redact import MASK, REGISTRY, SecretRegistry, redact_text, register_objects

HEX = "9f86d081884c7d659a2feaa0c55ad015"  # 32 hex digits: a blob, whatever the name


def env_pod(*env: tuple[str, str]) -> dict[str, Any]:
    containers = [{"name": "app", "env": [{"name": n, "value": v} for n, v in env]}]
    return {"kind": "Deployment", "spec": {"template": {"spec": {"containers": containers}}}}


def config_map(**data: str) -> dict[str, Any]:
    return {"kind": "ConfigMap", "data": data}


@pytest.mark.parametrize(
    ("body", "secret"),
    [
        (env_pod(("MYSQL_PWD", "Tr0ub4dor")), "Tr0ub4dor"),
        (env_pod(("DB_PASSWORD", "plain words here")), "plain words here"),
        (env_pod(("GITHUB_TOKEN", "abc123def")), "abc123def"),
        (env_pod(("SIGNING_KEY", "k3y-value")), "k3y-value"),
        (env_pod(("CACHE_URL", "redis://:r3dis-pw@cache:6379")), "r3dis-pw"),
        (env_pod(("DATABASE_URL", "postgres://app:pg-pw-1@db/app")), "pg-pw-1"),
        (env_pod(("SEED", "c2Vzc2lvbi1zaWduaW5nLWJsb2ItOTg3")), "c2Vzc2lvbi1zaWduaW5nLWJsb2ItOTg3"),
        (env_pod(("BUILD", HEX)), HEX),
        (config_map(**{"app.json": '{"db": {"password": "js0n-pw"}}'}), "js0n-pw"),
        (config_map(**{"app.ini": "[db]\nhost = x\npassword = 1ni-pw\n"}), "1ni-pw"),
        (config_map(**{"app.properties": "spring.datasource.password=pr0p-pw"}), "pr0p-pw"),
        (config_map(**{".env": "export API_TOKEN='d0tenv-tok'"}), "d0tenv-tok"),
        (config_map(**{"conf.yaml": "smtp:\n  auth:\n    password: yam1-pw\n"}), "yam1-pw"),
        (config_map(**{"kubeconfig": "users:\n- user:\n    client-key-data: a2V5LWRhdGE=\n"}),
         "a2V5LWRhdGE="),
        (config_map(**{"kubeconfig": "users:\n- user:\n    token: kube-t0ken\n"}), "kube-t0ken"),
        (config_map(password="whole-value"), "whole-value"),
        ({"kind": "Secret", "data": {"x": base64.b64encode(b"dec0ded-value").decode()}},
         "dec0ded-value"),
        ({"kind": "Secret", "stringData": {"anything": "str1ng-data"}}, "str1ng-data"),
    ],
)  # fmt: skip
def test_credentials_are_found_by_structure(body: dict[str, Any], secret: str) -> None:
    assert secret in set(object_credentials(body))


@pytest.mark.parametrize(
    "body",
    [
        env_pod(("PORT", "8080"), ("LOG_LEVEL", "info"), ("UPSTREAM", "http://cart:7070")),
        env_pod(("TOKEN_URL", "https://auth.example/token"), ("DB_PASSWORD", "$(FROM_SECRET)")),
        config_map(**{"nginx.conf": "server {\n  listen 80;\n}\n", "flags": '{"on": true}'}),
    ],
)
def test_ordinary_configuration_is_no_credential(body: dict[str, Any]) -> None:
    assert list(object_credentials(body)) == []


def test_a_pem_block_is_registered_whole_and_line_by_line() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCplanted01\n-----END RSA PRIVATE KEY-----"
    found = text_credentials(f"key: |\n{pem}")
    assert pem in found and "MIIEowIBAAKCplanted01" in found


def test_a_registered_value_is_masked_raw_json_escaped_and_per_line() -> None:
    registry = SecretRegistry()
    registry.add('multi "line"\nsecond line of it')
    assert registry.scrub(json.dumps({"v": 'multi "line"\nsecond line of it'})) == '{"v": "****"}'
    assert registry.scrub("echo: second line of it") == f"echo: {MASK}"


def test_a_password_in_a_dsn_with_no_user_is_masked_by_pattern() -> None:
    assert redact_text("redis://:unknown-pw@cache:6379") == f"redis://:{MASK}@cache:6379"


@pytest.mark.parametrize("forge", [LocalForge, GitHubForge])
def test_every_forge_adapter_scrubs_every_writing_verb(forge: type) -> None:
    assert getattr(forge, SCRUBBED, False)
    for verb in OUTBOUND_TEXT:
        assert getattr(forge, verb).__wrapped__, f"{forge.__name__}.{verb} is not scrubbed"


def test_the_local_forge_publishes_no_registered_value(tmp_path: Any) -> None:
    from tests.bot.fakes import scene

    world = scene(tmp_path)
    register_objects([env_pod(("MYSQL_PWD", "f0rge-planted-pw"))])
    world.forge.ensure_comment(world.bot_pr, "t", "the password is f0rge-planted-pw")
    world.forge.ensure_issue("leak f0rge-planted-pw", "body f0rge-planted-pw")
    bodies = [c.body for c in world.forge.list_comments(world.bot_pr)]
    assert not [b for b in bodies if "f0rge-planted-pw" in b]
    assert all("f0rge-planted-pw" not in i.title + i.body for i in _issues(world.forge))


def _issues(forge: LocalForge) -> Iterator[Any]:
    number = 1
    while True:
        try:
            yield forge.get_issue(number)
        except Exception:
            return
        number += 1


class EchoingModel:
    """Reads a Secret through a tool, then writes back the value it 'knows' everywhere."""

    def __init__(self, secret: str) -> None:
        self.secret, self.sent, self.turn = secret, [], 0

    def __call__(self, **kwargs: Any) -> Any:
        self.sent.append(json.dumps(kwargs["messages"]))
        self.turn += 1
        if self.turn == 1:
            calls = [("peek", {"why": self.secret})]
        else:
            edit = {"file": "f.yaml", "kind": "ConfigMap", "name": "c", "path": "data.x",
                    "op": "set", "value": self.secret}  # fmt: skip
            calls = [("propose_edit", edit), ("submit_diagnosis", {"summary": self.secret})]
        tool_calls = [SimpleNamespace(id=f"c{i}", function=SimpleNamespace(name=n,
                      arguments=json.dumps(a))) for i, (n, a) in enumerate(calls)]  # fmt: skip
        message = SimpleNamespace(content=f"I know {self.secret}", tool_calls=tool_calls)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=None)


def test_the_model_neither_sees_nor_publishes_a_registered_secret() -> None:
    secret = "m0del-echo-planted"
    register_objects([{"kind": "Secret", "stringData": {"k": secret}}])
    peek = Tool("peek", "read the secret", {"type": "object"}, lambda args: f"value={secret}")
    model = EchoingModel(secret)
    result = run_agent(model="scripted", incident=f"incident mentions {secret}", tools=[peek],
                       budget=Budget(max_steps=4), completion=model)  # fmt: skip
    assert all(secret not in sent for sent in model.sent[1:])  # after the model wrote it
    assert secret not in model.sent[0]
    assert secret not in result.diagnosis
    assert [e["value"] for e in result.edits] == [MASK]


def test_the_process_streams_scrub_whole_lines_split_across_writes() -> None:
    REGISTRY.add("str3am-planted-value")
    inner = io.StringIO()
    stream = ScrubbingStream(inner)
    for part in ('{"v": "str3am-', 'planted-value"}', "\n", "tail str3am-planted-value"):
        stream.write(part)
    stream.flush()
    assert inner.getvalue() == '{"v": "****"}\ntail ****'


def test_a_secret_value_that_is_a_declared_name_never_masks_the_name() -> None:
    """Structure stays readable: a name the objects declare is not a credential's place."""
    registry = SecretRegistry()
    registry.add("checkout")  # a Secret's value that is an ordinary word
    registry.add_identifiers(["checkout", "checkout-v2"])
    assert registry.scrub("Service shop/checkout selects checkout-v2") == (
        "Service shop/checkout selects checkout-v2"
    )
    registry.add("s3cr3t-value")  # a real secret is still masked wherever it appears
    assert registry.scrub("got s3cr3t-value from checkout") == f"got {MASK} from checkout"


def test_a_value_inside_a_longer_name_is_masked_only_outside_it() -> None:
    registry = SecretRegistry()
    registry.add("payments")
    registry.add_identifiers(["payments-db"])
    assert registry.scrub("payments-db said payments") == f"payments-db said {MASK}"


def test_a_file_and_line_is_a_location_not_a_secret_pair() -> None:
    assert redact_text("(apps/app-secret.yaml:12)") == "(apps/app-secret.yaml:12)"
    assert redact_text("deploy/db-password.yml:7:3: bad") == "deploy/db-password.yml:7:3: bad"
    assert redact_text("api-token.json:40") == "api-token.json:40"
    assert redact_text("DB_PASSWORD=hunter22") == f"DB_PASSWORD={MASK}"
    assert redact_text("secret.yaml:hunter2") == f"secret.yaml:{MASK}"


def test_loaded_objects_register_their_names_as_identifiers() -> None:
    register_objects(
        [
            {"kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "inventory"}},
            {"kind": "Service", "metadata": {"name": "inventory", "labels": {"app": "inventory"}}},
        ]
    )
    assert redact_text("Service shop/inventory: no endpoints") == (
        "Service shop/inventory: no endpoints"
    )
