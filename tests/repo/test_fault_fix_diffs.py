"""Every A-class fault, injected into a real app by an edit and fixed by restoring the
field (or object) to its value before the fault: the fix is one hunk of exactly the
changed lines and gives back the original bytes. Diffs are pinned as golden files;
GITMEDIC_UPDATE_GOLDEN=1 rewrites them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.history import restore_fields, restore_object
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.repo.conftest import MakeRepo

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden" / "diffs"
BOUTIQUE = "online-boutique/release/kubernetes-manifests.yaml"
SOCK = "sock-shop/deploy/kubernetes/complete-demo.yaml"
HOTEL_PROFILE = "hotel-reservation/kubernetes/profile/profile-deployment.yaml"
HOTEL_GEO_DB = "hotel-reservation/kubernetes/geo/mongodb-geo-deployment.yaml"
OTEL = "astronomy-shop-otel-demo/kubernetes/opentelemetry-demo.yaml"
POD = "spec.template.spec."


@dataclass(frozen=True)
class Fault:
    name: str
    file: str
    kind: str
    namespace: str
    obj: str
    # (op, path, value, index) of the injected change; the fix restores these paths
    changes: tuple[tuple[Op, str, Any, int | None], ...]

    @property
    def resource(self) -> Resource:
        return Resource(self.kind, self.namespace, self.obj)

    def edits(self) -> list[Edit]:
        path = f"apps/{self.file}"
        return [
            Edit(op, path, self.resource, parse_path(p) if p else (), v, i)
            for op, p, v, i in self.changes
        ]


def _set(path: str, value: Any) -> tuple[Op, str, Any, None]:
    return (Op.SET, path, value, None)


def _ins(path: str, value: Any, index: int | None = None) -> tuple[Op, str, Any, int | None]:
    return (Op.INSERT, path, value, index)


def _rm(path: str) -> tuple[Op, str, Any, None]:
    return (Op.REMOVE, path, None, None)


FRONTEND = f"{POD}containers[name=server]."
FAULTS = [
    Fault("service-target-port", BOUTIQUE, "Service", "", "cartservice",
          (_set("spec.ports[name=grpc].targetPort", 9999),)),
    Fault("service-selector-mismatch", BOUTIQUE, "Service", "", "frontend",
          (_ins("spec.selector.version", "v2"),)),
    Fault("scaled-to-zero", SOCK, "Deployment", "sock-shop", "catalogue",
          (_set("spec.replicas", 0),)),
    Fault("nonexistent-node", BOUTIQUE, "Deployment", "", "checkoutservice",
          (_ins(f"{POD}nodeSelector", {"kubernetes.io/hostname": "extra-node"}),)),
    Fault("bad-image", HOTEL_PROFILE, "Deployment", "", "profile",
          (_set(f"{POD}containers[0].image", "deathstarbench/hotel-reservation:no-such-tag"),)),
    Fault("wrong-command", HOTEL_PROFILE, "Deployment", "", "profile",
          (_set(f"{POD}containers[0].command", ["./geo"]),)),
    Fault("env-wrong-port", BOUTIQUE, "Deployment", "", "frontend",
          (_set(f"{FRONTEND}env[name=PRODUCT_CATALOG_SERVICE_ADDR].value",
                "productcatalogservice:3551"),)),
    Fault("env-missing", BOUTIQUE, "Deployment", "", "frontend",
          (_rm(f"{FRONTEND}env[name=CART_SERVICE_ADDR]"),)),
    Fault("env-shadowed", BOUTIQUE, "Deployment", "", "checkoutservice",
          (_ins(f"{POD}containers[name=server].env[7]",
                {"name": "CART_SERVICE_ADDR", "value": "localhost:7070"}),)),
    Fault("liveness-probe-wrong", BOUTIQUE, "Deployment", "", "frontend",
          (_set(f"{FRONTEND}livenessProbe.httpGet.path", "/no-such-path"),)),
    Fault("readiness-probe-wrong", SOCK, "Deployment", "sock-shop", "catalogue",
          (_set(f"{POD}containers[name=catalogue].readinessProbe.httpGet.port", 8080),)),
    Fault("memory-limit-too-small", SOCK, "Deployment", "sock-shop", "catalogue",
          (_set(f"{POD}containers[name=catalogue].resources.limits.memory", "10Mi"),)),
    Fault("request-too-large", SOCK, "Deployment", "sock-shop", "catalogue",
          (_set(f"{POD}containers[name=catalogue].resources.requests.memory", "64Gi"),)),
    Fault("pvc-claim-broken", HOTEL_GEO_DB, "Deployment", "", "mongodb-geo",
          (_set(f"{POD}volumes[name=geo].persistentVolumeClaim.claimName", "geo-pvc-broken"),)),
    Fault("rollout-strategy-unsafe", HOTEL_PROFILE, "Deployment", "", "profile",
          (_set("spec.strategy", {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}),)),
    Fault("dns-policy-none", BOUTIQUE, "Deployment", "", "adservice",
          (_ins(f"{POD}dnsPolicy", "None"),
           _ins(f"{POD}dnsConfig", {"nameservers": ["8.8.8.8"]}))),
    Fault("internal-traffic-policy-local", SOCK, "Service", "sock-shop", "catalogue",
          (_ins("spec.internalTrafficPolicy", "Local"),)),
    Fault("hpa-no-cpu-request", BOUTIQUE, "Deployment", "", "emailservice",
          (_rm(f"{POD}containers[name=server].resources.requests.cpu"),)),
    Fault("configmap-key-dropped", OTEL, "ConfigMap", "otel-demo", "grafana",
          (_rm('data["grafana.ini"]'),)),
    Fault("missing-configmap", OTEL, "ConfigMap", "otel-demo", "grafana",
          ((Op.REMOVE_OBJECT, "", None, None),)),
]  # fmt: skip


def _fix(repo: ManifestRepo, fault: Fault, baseline: str) -> list[Edit]:
    file = f"apps/{fault.file}"
    if fault.changes[0][0] is Op.REMOVE_OBJECT:
        return [restore_object(repo, fault.resource, baseline, file)]
    paths = [parse_path(p) for _, p, _, _ in fault.changes]
    return restore_fields(repo, fault.resource, paths, baseline, file)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_fix_restores_the_field_in_one_hunk(fault: Fault, make_repo: MakeRepo) -> None:
    git = make_repo(fault.file)
    repo = ManifestRepo(git.root)
    baseline = git.head()
    original = (git.root / "apps" / fault.file).read_bytes()

    repo.apply(fault.edits())
    broken = git.commit(f"inject {fault.name}", ".")
    fix = _fix(repo, fault, baseline)
    assert fix, "the fault changed nothing the history helper can see"
    repo.apply(fix)
    fixed = git.commit(f"fix {fault.name}", ".")

    diff = git.diff(broken, fixed)
    assert diff.count("\n@@ ") == 1, diff
    assert (git.root / "apps" / fault.file).read_bytes() == original
    golden = GOLDEN / f"{fault.name}.diff"
    if os.environ.get("GITMEDIC_UPDATE_GOLDEN") == "1":
        golden.write_text(diff)
    assert diff == golden.read_text()


def test_every_named_a_class_fault_has_a_golden_diff() -> None:
    assert {p.stem for p in GOLDEN.glob("*.diff")} == {f.name for f in FAULTS}
