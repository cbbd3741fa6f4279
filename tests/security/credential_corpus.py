"""A corpus of planted credentials, one per shape a repo or a cluster holds them in.

Each :class:`Shape` names where the credential sits and the values that must
never leave the process (a Basic header's password as well as the header's
token, a dockerconfig's ``auth`` as well as the password inside it). The nine
shapes of issue 27 are marked; the rest are the shapes the bot already masked,
kept so that a change to one layer cannot quietly drop another.

:func:`planted_objects` and :func:`planted_files` build them into the objects
of ``credentials.yaml`` and the loose files beside it (a ``.env``, a Helm values
file) that the sink tests put in a repo; :data:`PLANTED` maps each shape to its
values for the leak scan.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import yaml

NAMESPACE = "boutique"


@dataclass(frozen=True)
class Shape:
    name: str
    secrets: tuple[str, ...]
    issue_27: bool = False  # one of the nine shapes the issue found unmasked


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PEM = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPlAntEd4TheSuite01\n-----END EC PRIVATE KEY-----\n"
KEY_DATA = _b64(PEM)
DOCKER_AUTH = _b64("robot$ci:d0ckerCfg-Pw-77")
BASIC = _b64("svc:basic-Hdr-pw-55")
SLACK = "https://hooks.slack.com/services/T01PLANTD/B01PLANTD/pLaNtEdSlAcKwEbHoOk0123"
DISCORD = "https://discord.com/api/webhooks/123456789012/dIsCoRdPlAnTeDwEbHoOk-0123456789"
AZURE_KEY = "azUr3StorageKeyPlanted0123456789abcdefABCDEF+/=="
SENDGRID = "SG.pLaNtEdSeNdGrId0123456.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg"

SHAPES: tuple[Shape, ...] = (
    Shape("env MYSQL_PWD", ("Tr0ub4dor-mysql",)),
    Shape("env DB_PW", ("envDbPw-pl4nted",), issue_27=True),
    Shape("env API_CREDS", ("apiCr3ds-pl4nted",), issue_27=True),
    Shape("env SMTP_PASS", ("smtpPass-pl4nted",)),
    Shape("env GITHUB_TOKEN", ("ghTok3n-pl4nted-plain",)),
    Shape("env SIGNING_KEY", ("signK3y-pl4nted",)),
    Shape("env base64 blob", ("c2Vzc2lvbi1zaWduaW5nLWJsb2ItOTg3NjU0MzIx",)),
    Shape("env hex blob", ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",)),
    Shape("env DSN password", ("pgDsn-pl4nted-pw",)),
    Shape("env URL with a token as userinfo", ("gitRemoteTok3nPl4nted",)),
    Shape("arg --db-password v", ("argvDbPw-pl4nted",), issue_27=True),
    Shape("arg --token=v", ("argvTok3n-pl4nted",)),
    Shape("shell command --api-key v", ("shellApiK3y-pl4nted",)),
    Shape("redis DSN password", ("r3dis-Dsn-pw",)),
    Shape("JSON password", ("js0n-Inside-cm",)),
    Shape("INI password", ("ini-F1le-pass",)),
    Shape("properties password", ("pr0perties-Pw-cm",)),
    Shape("kubeconfig client-key-data", (KEY_DATA,)),
    Shape("kubeconfig token", ("kub3cfgTok3n-pl4nted",)),
    Shape("Azure AccountKey connection string", (AZURE_KEY,), issue_27=True),
    Shape("SQL Server Password= connection string", ("sqlConnPw-pl4nted",)),
    Shape("Slack webhook URL", (SLACK, "pLaNtEdSlAcKwEbHoOk0123"), issue_27=True),
    Shape("Discord webhook URL", (DISCORD, "dIsCoRdPlAnTeDwEbHoOk-0123456789")),
    Shape("Authorization: Basic header", (BASIC, "basic-Hdr-pw-55"), issue_27=True),
    Shape("Authorization: Bearer header", ("b3arerTok3nPl4ntedValue",)),
    Shape("pw: inside a values string", ("valuesPw-pl4nted",), issue_27=True),
    Shape("access_token in a URL query", ("qu3ryTok3nPl4nted",)),
    Shape("SendGrid key in free text", (SENDGRID,)),
    Shape("Secret data value", ("s3cret-Data-value",)),
    Shape("Secret stringData value", ("str1ngData-pl4nted",)),
    Shape("dockerconfigjson auth", (DOCKER_AUTH, "d0ckerCfg-Pw-77"), issue_27=True),
    Shape("DB_PW= in a committed .env", ("d0tEnvDbPw-pl4nted",), issue_27=True),
    Shape("provider API key (env of gitmedic)", ("scripted-provider-key-0123",)),
)
PLANTED: dict[str, tuple[str, ...]] = {s.name: s.secrets for s in SHAPES}


def secret(name: str) -> str:
    return PLANTED[name][0]


def planted_objects() -> list[dict[str, Any]]:
    """The objects of ``credentials.yaml``: a ConfigMap, two Secrets, a Deployment."""
    return [_config_map(), *_secrets(), _deployment()]


def planted_files() -> dict[str, str]:
    """Loose files of the app's folder (relative path: text) that are no manifests."""
    return {
        ".env": f"# local settings\nDB_PW={secret('DB_PW= in a committed .env')}\nPORT=8080\n",
    }


def _config_map() -> dict[str, Any]:
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "users": [
            {
                "name": "admin",
                "user": {"client-key-data": KEY_DATA, "token": secret("kubeconfig token")},
            }
        ],
    }
    data = {
        "redis.url": f"redis://:{secret('redis DSN password')}@redis-cart:6379/0",
        "settings.json": json.dumps({"db": {"user": "app", "password": secret("JSON password")}}),
        "legacy.ini": f"[database]\nhost = db\npassword = {secret('INI password')}\n",
        "app.properties": f"spring.datasource.password={secret('properties password')}\n",
        "kubeconfig": yaml.safe_dump(kubeconfig),
        "storage": "DefaultEndpointsProtocol=https;AccountName=reports;"
        f"AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
        "sqlserver": "Server=tcp:db,1433;Database=reports;User Id=app;"
        f"Password={secret('SQL Server Password= connection string')};",
        "alerts": f"notify {SLACK} on failure",
        "discord": DISCORD,
        "nginx.conf": f'location / {{\n  proxy_set_header Authorization "Basic {BASIC}";\n}}\n',
        "upstream.conf": "headers:\n  Authorization: Bearer "
        f"{secret('Authorization: Bearer header')}\n",
        "extra": f"host=db user=app pw: {secret('pw: inside a values string')} sslmode=off",
        "callback": "https://api.example.com/v1/report?format=csv&access_token="
        f"{secret('access_token in a URL query')}",
        "notes": f"mail relay key {SENDGRID} (rotate yearly)",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "reports-config", "namespace": NAMESPACE},
        "data": data,
    }


def _secrets() -> list[dict[str, Any]]:
    docker = json.dumps({"auths": {"registry.example.com": {"auth": DOCKER_AUTH}}})
    return [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "reports-db", "namespace": NAMESPACE},
            "data": {"connection": _b64(secret("Secret data value"))},
            "stringData": {"api": secret("Secret stringData value")},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "reports-pull", "namespace": NAMESPACE},
            "data": {".dockerconfigjson": _b64(docker)},
        },
    ]


def _deployment() -> dict[str, Any]:
    env = [
        {"name": "MYSQL_PWD", "value": secret("env MYSQL_PWD")},
        {"name": "DB_PW", "value": secret("env DB_PW")},
        {"name": "API_CREDS", "value": secret("env API_CREDS")},
        {"name": "SMTP_PASS", "value": secret("env SMTP_PASS")},
        {"name": "GITHUB_TOKEN", "value": secret("env GITHUB_TOKEN")},
        {"name": "SIGNING_KEY", "value": secret("env SIGNING_KEY")},
        {"name": "FEATURE_SEED", "value": secret("env base64 blob")},
        {"name": "CACHE_BUSTER", "value": secret("env hex blob")},
        {"name": "DATABASE_URL", "value": f"postgres://app:{secret('env DSN password')}@db/app"},
        {
            "name": "GIT_REMOTE",
            "value": f"https://{secret('env URL with a token as userinfo')}@git.example.com/r.git",
        },
    ]
    args = ["--db-password", secret("arg --db-password v"), f"--token={secret('arg --token=v')}"]
    shell = f"exec report --api-key {secret('shell command --api-key v')} --verbose"
    containers = [
        {
            "name": "reports",
            "image": "busybox:1.36",
            "command": ["sleep", "3600"],
            "args": args,
            "env": env,
        },
        {"name": "sidecar", "image": "busybox:1.36", "command": ["sh", "-c", shell]},
    ]
    spec = {"imagePullSecrets": [{"name": "reports-pull"}], "containers": containers}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "reports", "namespace": NAMESPACE},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "reports"}},
            "template": {"metadata": {"labels": {"app": "reports"}}, "spec": spec},
        },
    }
