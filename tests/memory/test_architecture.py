"""The architecture summary: from real manifests, pinned, regenerated on topology change."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.memory.architecture import (
    ARCHITECTURE_PATH,
    architecture_change,
    is_stale,
    pinned,
    render_architecture,
    topology,
)
from gitmedic.bot.memory.guard import check_memory
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import APPS, App
from tests.memory.scenario import plus, with_value

BOUTIQUE = APPS / "online-boutique/release/kubernetes-manifests.yaml"
SHA = "0123456789abcdef0123456789abcdef01234567"


def boutique():  # type: ignore[no-untyped-def]
    return load_desired(BOUTIQUE, namespace="boutique").snapshot


def test_the_summary_names_services_dependencies_and_entry_points(tmp_path: Path) -> None:
    text = render_architecture(boutique(), SHA, title="online-boutique")
    assert pinned(text) == (SHA, topology(boutique()).fingerprint())
    assert "| boutique/frontend-external | LoadBalancer |" in text
    assert "| boutique/checkoutservice | CART_SERVICE_ADDR | cartservice.boutique:7070 |" in text
    assert "| Service LoadBalancer | boutique/frontend-external |" in text
    (tmp_path / ARCHITECTURE_PATH).parent.mkdir(parents=True)
    (tmp_path / ARCHITECTURE_PATH).write_text(text)
    assert check_memory(tmp_path) == []


def test_regenerated_only_when_the_topology_changes(tmp_path: Path) -> None:
    base = boutique()
    first = architecture_change(tmp_path, base, SHA)
    (tmp_path / ARCHITECTURE_PATH).parent.mkdir(parents=True)
    (tmp_path / ARCHITECTURE_PATH).write_text(first[ARCHITECTURE_PATH])
    path = ("spec", "template", "spec", "containers")
    cart = base.get("Deployment", "boutique", "cartservice")
    assert cart is not None
    bumped = [
        {**c, "image": "cart:v2"} for c in cart.body["spec"]["template"]["spec"]["containers"]
    ]
    routine = with_value(with_value(base, "Deployment", "cartservice", ("spec", "replicas"), 3),
                         "Deployment", "cartservice", path, bumped)  # fmt: skip
    assert architecture_change(tmp_path, routine, "1" * 40) == {}
    assert not is_stale((tmp_path / ARCHITECTURE_PATH).read_text(), routine)
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "shop", "namespace": "boutique"},
        "spec": {"rules": [{"host": "shop.example", "http": {"paths": [
            {"path": "/", "backend": {"service": {"name": "frontend", "port": {"number": 80}}}}
        ]}}]},
    }  # fmt: skip
    changed = architecture_change(tmp_path, plus(base, ingress), "2" * 40)
    assert (
        "| Ingress/boutique/shop shop.example/ | Service/frontend:80 |"
        in changed[ARCHITECTURE_PATH]
    )
    assert is_stale(None, base) and is_stale("no front matter", base)


def test_every_real_app_gets_a_stable_fingerprint(real_app: App) -> None:
    snapshot = load_desired(real_app.path, namespace=real_app.namespace).snapshot
    again = load_desired(real_app.path, namespace=real_app.namespace).snapshot
    assert topology(snapshot).fingerprint() == topology(again).fingerprint()
    assert render_architecture(snapshot, SHA).startswith(f"---\ncommit: {SHA}\ntopology: ")
