"""The tier's harness without a cluster: where the binaries are looked for, the
bot's generated RBAC rules, and what the fake kubelet reports. These run everywhere
(one, which stops a real process, in the integration tier)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.realkube.bot_identity import chart_rules
from tests.realkube.kubelet import entrypoint_missing, image_missing, kubelet_status
from tests.realkube.pki import make_pki
from tests.realkube.processes import Processes, stop_recorded
from tests.realkube.tools import (
    ARGOCD_KEY_FILES,
    BUILD_HINT,
    DEBIAN_KEY_FILES,
    FLUX_KEY_FILES,
    K8S_KEY_FILES,
    WRAPPERS,
    cache_key,
    find_tools,
)
from tests.support.postgres import POSTGRES_KEY_FILES


def test_the_build_script_and_the_tests_agree_on_the_cache_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path))
    printed = subprocess.run(
        ["bash", str(WRAPPERS / "build.sh"), "--print-dirs"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert printed == [
        str(tmp_path / f"kube-k8s-{cache_key(K8S_KEY_FILES)}"),
        str(tmp_path / f"kube-flux-{cache_key(FLUX_KEY_FILES)}"),
        str(tmp_path / f"kube-argocd-{cache_key(ARGOCD_KEY_FILES)}"),
        str(tmp_path / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"),
        str(tmp_path / f"kube-postgres-{cache_key(POSTGRES_KEY_FILES)}"),
    ]


@pytest.mark.parametrize("etcd_on_path", [False, True], ids=["fresh-machine", "etcd-on-path"])
def test_a_machine_without_the_build_gets_the_reason_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, etcd_on_path: bool
) -> None:
    """The reason names the missing build whether or not the machine has an etcd of
    its own, and etcd only when there is none (a fresh machine has neither): session
    8's fresh machine got etcd alone, so the hint named one of the two things missing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if etcd_on_path:
        (bin_dir / "etcd").write_text("#!/bin/sh\n")
        (bin_dir / "etcd").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path / "tools"))

    reason = find_tools()

    assert isinstance(reason, str)
    assert reason.endswith(f": {BUILD_HINT}")
    k8s = tmp_path / "tools" / f"kube-k8s-{cache_key(K8S_KEY_FILES)}"
    assert f"{k8s} is not built" in reason
    debian = tmp_path / "tools" / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"
    assert (f"no etcd in {debian} nor on PATH" in reason) is not etcd_on_path


def test_the_bot_rules_are_the_charts_and_grant_only_reads() -> None:
    default, with_secrets = chart_rules(read_secrets=False), chart_rules(read_secrets=True)
    assert {tuple(r["verbs"]) for r in with_secrets} == {("get", "list", "watch")}
    granted = {p for r in default for p in r["resources"]}
    assert {"pods", "deployments", "services", "endpoints"} <= granted
    assert "secrets" not in granted, "the chart's default grants no Secrets"
    assert {p for r in with_secrets for p in r["resources"]} - granted == {"secrets"}


def pod(image: str, command: list[str] | None = None) -> dict[str, object]:
    container: dict[str, object] = {"name": "server", "image": image}
    if command:
        container["command"] = command
    return {"spec": {"containers": [container]}, "status": {"phase": "Running"}}


def test_the_fake_kubelet_reports_a_missing_image_and_a_missing_entrypoint() -> None:
    verdicts = [
        image_missing({"shop/catalog:9.9"}),
        entrypoint_missing("shop/catalog:1.0", ["/v2"]),
    ]

    pulled = kubelet_status(pod("shop/catalog:9.9"), verdicts)
    crashed = kubelet_status(pod("shop/catalog:1.0", ["/v2"]), verdicts)

    assert kubelet_status(pod("shop/catalog:1.0"), verdicts) is None
    assert pulled and crashed
    [pull] = pulled["status"]["containerStatuses"]
    assert pull["state"]["waiting"]["reason"] == "ImagePullBackOff" and pull["ready"] is False
    [crash] = crashed["status"]["containerStatuses"]
    assert crash["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert crash["lastState"]["terminated"]["exitCode"] == 127
    ready = {c["type"]: c["status"] for c in crashed["status"]["conditions"]}
    assert ready["Ready"] == "False" and crashed["status"]["phase"] == "Running"


def test_the_pki_serves_loopback_and_lists_one_token_per_identity(tmp_path: Path) -> None:
    from cryptography import x509

    pki = make_pki(tmp_path)
    cert = x509.load_pem_x509_certificate((tmp_path / "apiserver.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    lines = (tmp_path / "tokens.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines] == list(pki.tokens.values())
    assert lines[0].endswith(',"system:masters"')


@pytest.mark.integration  # a real process, polled until it has exec'd, then stopped
def test_a_process_that_rewrites_its_title_is_still_stopped(tmp_path: Path) -> None:
    """As redis-server does: its argv[0] becomes "PROGRAM ADDRESS", one argument."""
    procs = Processes(tmp_path / "run")
    bash = shutil.which("bash") or "/bin/bash"
    process = procs.start("titled", [bash, "-c", f'exec -a "{bash} 127.0.0.1:6379" sleep 600'])
    titled = f"{bash} 127.0.0.1:6379"
    for _ in range(200):  # until the exec is done (the title is empty in between)
        title = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        if title == titled:
            break
        time.sleep(0.05)
    assert title == titled
    try:
        stop_recorded(tmp_path / "run", grace_s=5)
    finally:
        process.kill()  # never left behind, whatever stop_recorded did
        process.wait()
    assert process.returncode == -signal.SIGTERM, "stopped by stop_recorded's SIGTERM"
