"""Real gitops-engine `kubectl get -o yaml` dumps served by kmock, read by the live
loader and judged by the live detectors, end to end; and `gitmedic detect --live`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.bot.cli.main import main
from gitmedic.detectors import run_detectors
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.reconciler.live import load_live
from tests.conftest import DATA
from tests.live.kmock_thread import RESOURCES, KmockThread

DUMPS = DATA / "gitops-engine-health" / "testdata"
OURS = {
    "pod-crashloop", "pod-image-pull", "pod-config-error", "pod-unschedulable", "pod-init-stuck",
    "deployment-unavailable", "service-no-endpoints",
}  # fmt: skip
# dump -> the (detector, rule, resource) our live detectors must report; every other pod,
# deployment and statefulset dump must give none.
EXPECTED = {
    "pod-crashloop.yaml": [("pod-crashloop", "crashloop", "Pod/argocd/my-pod")],
    "pod-error.yaml": [("pod-crashloop", "crashloop", "Pod/argocd/my-pod")],
    "pod-running-restart-onfailure.yaml": [("pod-crashloop", "crashloop", "Pod/argocd/my-pod")],
    "pod-imagepullbackoff.yaml": [
        ("pod-image-pull", "image-pull", "Deployment/default/guestbook-ui-errimagepullbackoff")
    ],
    "pod-running-restart-never-with-ignore-annotation-backoff.yaml": [
        ("pod-image-pull", "image-pull", "Pod/argocd/my-pod")
    ],
    "deployment-degraded.yaml": [
        ("deployment-unavailable", "progress-deadline-exceeded", "Deployment/default/guestbook-ui")
    ],
}
DUMP_FILES = sorted(
    p.name
    for p in DUMPS.glob("*.yaml")
    if p.name.startswith(("pod-", "deployment-", "statefulset"))
)


def load_dump(path: Path) -> list[dict[str, Any]]:
    """A dump as the API would send it: timestamps as RFC 3339 strings, not YAML datetimes."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return [json.loads(json.dumps(d, default=_rfc3339)) for d in docs]


def _rfc3339(value: object) -> str:
    assert isinstance(value, dt.datetime | dt.date)
    return value.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("name", DUMP_FILES)
def test_real_dumps_through_the_live_loader(
    cluster: KmockThread, tmp_path: Path, name: str
) -> None:
    cluster.add(o for o in load_dump(DUMPS / name) if o["kind"] in RESOURCES)

    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))
    result = run_detectors(builtin_registry(), snapshot)

    assert not result.errors
    ours = [f for f in result.findings if f.detector in OURS]
    assert [(f.detector, f.rule, str(f.resource)) for f in ours] == EXPECTED.get(name, [])
    pods = [o.ref for o in snapshot.of_kind("Pod")]
    for f in ours:  # pod findings name the workload and relate the pods
        assert list(f.related) == (pods if f.detector.startswith("pod-") else [])


def test_crashloop_finding_carries_reason_exit_code_and_restarts(
    cluster: KmockThread, tmp_path: Path
) -> None:
    cluster.add(load_dump(DUMPS / "pod-crashloop.yaml"))
    snapshot = load_live(kubeconfig=str(cluster.kubeconfig(tmp_path)))

    [finding] = run_detectors([builtin_registry().get("pod-crashloop")], snapshot).findings

    assert finding.params == {
        "container": "main", "container_field": "containers", "reason": "CrashLoopBackOff",
        "last_termination_reason": "Error", "exit_codes": [1],
    }  # fmt: skip
    assert "my-pod (restarts 3)" in finding.evidence
    assert "Back-off 40s restarting failed container" in finding.evidence


def test_detect_live_cli_reports_findings_as_json(
    cluster: KmockThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    cluster.add(load_dump(DUMPS / "pod-imagepullbackoff.yaml"))
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig(tmp_path, context="lab")))

    code = main(["detect", "--live", "--context", "lab", "--namespace", "default",
                 "--format", "json", "--detector", "pod-image-pull"])  # fmt: skip

    out = json.loads(capsys.readouterr().out)
    assert code == 1
    [finding] = out["findings"]
    assert finding["resource"]["name"] == "guestbook-ui-errimagepullbackoff"
    assert finding["params"]["image"] == "gcr.io/heptio-images/ks-guestbook-demo:0.3"
    assert out["errors"] == []


def test_detect_live_cli_exits_2_with_a_clear_error(
    cluster: KmockThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    def forbid() -> None:
        cluster.emulator["get /api/v1/pods"] << 403 << {"message": "pods is forbidden"}

    cluster.call(forbid)
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig(tmp_path)))

    code = main(["detect", "--live", "--format", "json"])

    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err == (
        "gitmedic: error: cannot read the cluster: listing pods (/api/v1/pods): "
        "HTTP 403 Forbidden: pods is forbidden\n"
    )


def test_detect_live_without_secrets_granted_warns_and_still_detects(
    cluster: KmockThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    def forbid() -> None:
        cluster.emulator["get /api/v1/namespaces/default/secrets"] << 403 << {
            "message": "secrets is forbidden"
        }  # fmt: skip

    cluster.call(forbid)
    cluster.add(load_dump(DUMPS / "pod-imagepullbackoff.yaml"))
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig(tmp_path)))

    code = main(["detect", "--live", "--namespace", "default", "--format", "json"])

    captured = capsys.readouterr()
    assert code == 1
    assert "pod-image-pull" in {f["detector"] for f in json.loads(captured.out)["findings"]}
    [warning] = captured.err.splitlines()
    assert warning.startswith(
        "warning: not allowed: listing secrets (/api/v1/namespaces/default/secrets): "
        "HTTP 403 Forbidden: secrets is forbidden; detectors that read Secret ran without it: "
    )
    readers = [d.id for d in builtin_registry() if "Secret" in d.spec.kinds]
    assert readers and warning.endswith(", ".join(readers))
