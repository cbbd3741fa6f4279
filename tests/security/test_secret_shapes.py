"""Credentials found by structure and shape, and the structure that is never masked.

The parts behind :mod:`.test_redaction_sinks`: every shape of the corpus is
registered from the objects and files that hold it, before any text about them
is written; a credential a text holds only by its place (after ``--token``, in
``AccountKey=...;``, in a URL's userinfo) is masked in place in what leaves,
whoever wrote it (the model included); detect-secrets' plugins catch issuers'
tokens in free text. And what issue 22 fixed stays fixed: resource names, file
names and line numbers are never masked.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest
import yaml

from gitmedic.reconciler.credential_names import is_credential_env_name, is_credential_name
from gitmedic.reconciler.credentials import object_credentials, text_credentials
from gitmedic.reconciler.redact import MASK, REGISTRY, redact_text, register_objects
from gitmedic.reconciler.secret_scan import PLUGINS, detected
from tests.security import credential_corpus as corpus

STRUCTURAL = [s for s in corpus.SHAPES if not s.name.startswith("provider API key")]


def registered_from_repo() -> set[str]:
    found = {v for body in corpus.planted_objects() for v in object_credentials(body)}
    return found | {v for text in corpus.planted_files().values() for v in text_credentials(text)}


def test_the_corpus_has_thirty_shapes_and_the_nine_of_issue_27() -> None:
    assert len(corpus.SHAPES) >= 30
    assert sum(s.issue_27 for s in corpus.SHAPES) == 9


@pytest.mark.parametrize("shape", STRUCTURAL, ids=[s.name for s in STRUCTURAL])
def test_every_planted_shape_is_registered_from_what_holds_it(shape: corpus.Shape) -> None:
    found = registered_from_repo()
    assert [v for v in shape.secrets if v not in found] == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the job runs `report --db-password hunter2-db` nightly", "hunter2-db"),
        ("it was started with --token=t0ken-flag-9", "t0ken-flag-9"),
        ('args: ["--api-key", "k3y-in-args"]', "k3y-in-args"),
        ("AccountName=a;AccountKey=bm90LWEtcmVhbC1rZXk=;EndpointSuffix=x", "bm90LWEtcmVhbC1rZXk="),
        ("Server=db;User Id=app;Password=sq1-conn-pw;", "sq1-conn-pw"),
        ("Authorization: Basic dXNlcjpzM2NyZXQ=", "dXNlcjpzM2NyZXQ="),
        ('-H "Authorization: Bearer abc.def-bearer"', "abc.def-bearer"),
        ("clone https://ghs-lone-userinfo@git.example/r.git", "ghs-lone-userinfo"),
        ("post to https://hooks.slack.com/services/T1/B2/unseenSlackPath", "unseenSlackPath"),
        ("values: host=db pw: valuesPwInline", "valuesPwInline"),
        ("DB_PW=dotenv-unseen-pw", "dotenv-unseen-pw"),
        ("GET /report?format=csv&access_token=qs-t0ken-unseen", "qs-t0ken-unseen"),
        ("db:\n  pw: $ecret-D0llar\n", "$ecret-D0llar"),
    ],
)
def test_a_credential_held_by_its_place_is_masked_in_any_outbound_text(
    text: str, secret: str
) -> None:
    out = redact_text(f"The model says: {text}")
    assert secret not in out and MASK in out and out.startswith("The model says:")


def test_a_detect_secrets_finding_is_registered_so_a_later_bare_echo_is_masked() -> None:
    key = "SG.unseenSendGridKey01234.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg"
    assert key in detected(f"relay {key}")
    assert key not in redact_text(f"mail relay key {key}")
    assert REGISTRY.scrub(f"again: {key}") == f"again: {MASK}"


def test_the_plugin_list_names_only_plugins_that_exist() -> None:
    assert len(PLUGINS) == len(set(PLUGINS)) >= 12
    assert detected("nothing secret here") == ()  # loads every plugin: an unknown one raises


@pytest.mark.parametrize(
    "text",
    [
        "Deployment boutique/reports: container reports mounts secretName reports-db",
        "(apps/app-secret.yaml:12) Secret boutique/db-password-v2 is not referenced",
        "deploy/api-token.json:40:3: spec.template.spec.containers[0].env[2] (DB_PW)",
        "image: app@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "the app reads --password-file /etc/db/password and TOKEN_URL=https://auth.example/token",
        "commit 1f0e3c2d4b5a69788796a5b4c3d2e1f0a9b8c7d6 changed 3 lines",
        "UPSTREAM=http://cart:7070 SECRET_NAME=reports-db",
        "secretKeyRef:\n  name: reports-db\n  key: db-password\n",
        "tolerations:\n- key: node-role.kubernetes.io/control-plane\n  effect: NoSchedule",
        "spec:\n  automountServiceAccountToken: false\n",
        "env: API_TOKEN: ${API_TOKEN} and --token {{ .Values.token }}",
    ],
)
def test_structure_is_never_masked(text: str) -> None:
    assert redact_text(text) == text


def test_names_and_places_of_objects_stay_readable_when_their_credentials_are_registered() -> None:
    register_objects(corpus.planted_objects())
    text = "Deployment boutique/reports uses Secret reports-pull and ConfigMap reports-config"
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("name", "credential", "as_env"),
    [
        ("DB_PW", True, True),
        ("API_CREDS", True, True),
        ("AccountKey", True, True),
        ("client-key-data", True, True),
        ("auth", True, True),
        ("SMTPPASS", True, True),
        ("MYTOKENVALUE", False, True),  # *TOKEN*: an env var's name only
        ("TOKEN_FILE", False, False),  # where it is, not what it is
        ("password-file", False, False),
        ("SECRET_NAME", False, False),
        ("api_key_env", False, False),
        ("PORT", False, False),
    ],
)
def test_credential_names(name: str, credential: bool, as_env: bool) -> None:
    assert (is_credential_name(name), is_credential_env_name(name)) == (credential, as_env)


def test_without_detect_secrets_the_structure_still_masks_and_the_model_does_not_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitmedic.bot.common.extras import missing_extra_message
    from gitmedic.bot.responder.llm import Budget, run_agent
    from gitmedic.reconciler import secret_scan

    monkeypatch.setitem(sys.modules, secret_scan.MODULE, None)  # a detect-only install
    monkeypatch.setattr(secret_scan, "_plugins", functools.cache(secret_scan._plugins.__wrapped__))
    assert detected("AKIAIOSFODNN7EXAMPLE and xoxb-1234567890-abcdefghij") == ()
    assert "argv-pw-no-lib" not in redact_text("run --db-password argv-pw-no-lib")
    with pytest.raises(ModuleNotFoundError) as missing:
        run_agent(model="openai/x", incident="i", tools=[], budget=Budget(max_steps=1))
    assert "pip install 'gitmedic[llm]'" in (missing_extra_message(missing.value, "run") or "")


@pytest.mark.integration
def test_a_detect_only_install_without_detect_secrets_still_detects(tmp_path: Path) -> None:
    from tests.packaging.test_missing_extra import _cli_without

    app = tmp_path / "app.yaml"
    app.write_text(yaml.safe_dump_all(corpus.planted_objects()))
    result = _cli_without("detect_secrets", "detect", str(app), "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and '"findings"' in result.stdout
    assert [v for s in STRUCTURAL for v in s.secrets if v in result.stdout] == []
