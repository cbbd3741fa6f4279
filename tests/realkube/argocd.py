"""Real Argo CD on the control plane: its CRDs, redis, the repo-server, the
application-controller and the API server, reading the repositories that Flux's
git server serves (the same repository the local forge merges into).

One multi-call binary plays each part (``ARGOCD_BINARY_NAME``). What they need
here (issue 16's study, and this harness):

- the repo-server: ``--disable-tls`` with ``--client-ca-path ""``, redis (Debian's
  redis-server), and ``git-verify-wrapper.sh`` from the module's ``hack/`` on PATH
  (v3.6 verifies commit signatures unconditionally), GnuPG off;
- the controller and the API server: ``ARGOCD_FAKE_IN_CLUSTER`` with
  ``KUBECONFIG``, so the in-cluster destination (``https://kubernetes.default.svc``)
  is this API server; the API server in plain HTTP (``--insecure``).

The bot's credential is what a platform team gives it: a local account with the
``apiKey`` capability and an RBAC role that may only ``get`` applications, its
token issued by the API server (``POST /api/v1/account/gitmedic/token``) to the
admin, who logs in with the initial password the server generated.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import secrets
import socket
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.realkube.boutique import wait_for
from tests.realkube.control_plane import ControlPlane, http_ok
from tests.realkube.processes import Processes, free_port
from tests.realkube.tools import Tools

NAMESPACE = "argocd"
BOT_ACCOUNT = "gitmedic"
RESYNC_S = "5"  # how often the controller compares each application with git
START_TIMEOUT_S = 180.0
# the bot may read applications (a hard refresh is part of a read), nothing more
RBAC_POLICY = f"p, role:gitmedic, applications, get, */*, allow\ng, {BOT_ACCOUNT}, role:gitmedic\n"


@dataclass(frozen=True)
class ArgoCD:
    url: str  # http://127.0.0.1:<port>, the API server
    token: str  # the bot account's API token
    plane: ControlPlane

    def deploy(self, name: str, repo_url: str, path: str, namespace: str) -> None:
        """An Application ``name`` syncing ``path`` of ``main`` into ``namespace``,
        automatically (pruning, healing drift), as a GitOps team runs it."""
        self.plane.apply([application(name, repo_url, path, namespace)])

    def application(self, name: str) -> dict[str, Any]:
        return self.plane.get_json("application", name, "-n", NAMESPACE)

    def forget(self, name: str) -> None:
        """Delete the Application (not what it deployed: the test's namespace goes
        with the test), so Argo CD stops syncing into a namespace being deleted."""
        self.plane.kubectl(
            "delete", "application", name, "-n", NAMESPACE, "--wait=false", "--ignore-not-found"
        )


def application(name: str, repo_url: str, path: str, namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "project": "default",
            "source": {"repoURL": repo_url, "targetRevision": "main", "path": path},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    }


def start_argocd(tools: Tools, plane: ControlPlane, folder: Path, procs: Processes) -> ArgoCD:
    crds = sorted(str(p) for p in (tools.argocd / "crds").glob("*.yaml"))
    applied = plane.kubectl(
        "apply", "--server-side", "-o", "name", *(arg for c in crds for arg in ("-f", c))
    )
    for crd in applied.split():
        # polled: `kubectl wait` gives up on a CRD that has no conditions yet
        wait_for(functools.partial(_established, plane, crd), f"{crd} established", 60.0)
    plane.apply(_settings())
    work = folder / "argocd"
    (work / "tmp").mkdir(parents=True)
    env = _environment(tools, plane, work)
    redis = _start_redis(tools, work, procs)
    repo_server = _start_repo_server(tools, redis, env, procs)
    common = [
        f"--redis={redis}",
        f"--repo-server={repo_server}",
        "--repo-server-plaintext",
        f"--namespace={NAMESPACE}",
        "--loglevel=info",
    ]
    metrics = free_port()  # the controller's metrics server also answers /healthz
    controller = [
        f"--metrics-port={metrics}",
        f"--app-resync={RESYNC_S}",
        "--app-resync-jitter=0",
        "--status-processors=2",
        "--operation-processors=2",
    ]
    health = f"http://127.0.0.1:{metrics}/healthz"
    _start(tools, procs, "argocd-application-controller", env, [*common, *controller], health)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = [
        "--insecure",
        "--address=127.0.0.1",
        f"--port={port}",
        f"--metrics-port={free_port()}",
    ]
    _start(tools, procs, "argocd-server", env, [*common, *server], f"{url}/healthz")
    return ArgoCD(url, _bot_token(url, plane), plane)


def _environment(tools: Tools, plane: ControlPlane, work: Path) -> dict[str, str]:
    return {
        "KUBECONFIG": str(plane.kubeconfig),
        "ARGOCD_FAKE_IN_CLUSTER": "true",
        "ARGOCD_GPG_ENABLED": "false",
        "ARGOCD_GNUPGHOME": str(work / "gnupg"),
        "ARGOCD_ASK_PASS_SOCK": str(work / "ask-pass.sock"),
        "ARGOCD_TLS_DATA_PATH": str(work / "tls"),
        "ARGOCD_SSH_DATA_PATH": str(work / "ssh"),
        "TMPDIR": str(work / "tmp"),
        "HOME": str(work),
        # git-verify-wrapper.sh, which the repo-server runs by name
        "PATH": f"{tools.argocd / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


def _settings() -> list[dict[str, object]]:
    """The namespace, argocd-cm (the bot's account), argocd-rbac-cm (its role),
    argocd-secret (the server's signing key) and the default project."""
    labels = {"app.kubernetes.io/part-of": "argocd"}

    def config_map(name: str, data: dict[str, str]) -> dict[str, object]:
        metadata = {"name": name, "namespace": NAMESPACE, "labels": labels}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}

    secret_key = secrets.token_urlsafe(32)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        config_map("argocd-cm", {f"accounts.{BOT_ACCOUNT}": "apiKey"}),
        config_map("argocd-rbac-cm", {"policy.csv": RBAC_POLICY, "policy.default": ""}),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "argocd-secret", "namespace": NAMESPACE, "labels": labels},
            "stringData": {"server.secretkey": secret_key},
        },
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": NAMESPACE},
            "spec": {
                "sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
            },
        },
    ]


def _established(plane: ControlPlane, crd: str) -> bool:
    conditions = plane.get_json(crd).get("status", {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _start_redis(tools: Tools, work: Path, procs: Processes) -> str:
    port = free_port()
    argv = [str(tools.redis), "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    procs.start("redis", [*argv, "--appendonly", "no", "--dir", str(work)], tools.redis_env)
    procs.wait_until("redis", functools.partial(_redis_answers, port), START_TIMEOUT_S)
    return f"127.0.0.1:{port}"


def _start_repo_server(tools: Tools, redis: str, env: dict[str, str], procs: Processes) -> str:
    port, metrics = free_port(), free_port()
    argv = [
        f"--redis={redis}",
        "--address=127.0.0.1",
        f"--port={port}",
        "--metrics-address=127.0.0.1",
        f"--metrics-port={metrics}",
        "--disable-tls",
        "--client-ca-path=",
        # how long main's commit is cached (3 min by default): a commit is seen at
        # the controller's next resync
        f"--revision-cache-expiration={RESYNC_S}s",
        "--loglevel=info",
    ]
    _start(tools, procs, "argocd-repo-server", env, argv, f"http://127.0.0.1:{metrics}/healthz")
    return f"127.0.0.1:{port}"


def _start(
    tools: Tools, procs: Processes, name: str, env: dict[str, str], argv: list[str], health: str
) -> None:
    binary = str(tools.argocd / "bin" / "argocd")
    procs.start(name, [binary, *argv], env={**env, "ARGOCD_BINARY_NAME": name})
    procs.wait_until(name, functools.partial(http_ok, health), START_TIMEOUT_S)


def _bot_token(url: str, plane: ControlPlane) -> str:
    """The admin logs in with the generated initial password and issues the bot's token."""
    secret = plane.get_json("secret", "argocd-initial-admin-secret", "-n", NAMESPACE)
    password = base64.b64decode(secret["data"]["password"]).decode()
    login = {"username": "admin", "password": password}
    admin = str(_post(f"{url}/api/v1/session", login)["token"])
    issued = _post(f"{url}/api/v1/account/{BOT_ACCOUNT}/token", {"name": BOT_ACCOUNT}, admin)
    return str(issued["token"])


def _post(url: str, body: dict[str, str], token: str = "") -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False
