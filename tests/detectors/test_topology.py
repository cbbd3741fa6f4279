"""The env-address dependency graph: expansion, host/port pairing, callers."""

from __future__ import annotations

from typing import Any

from gitmedic.detectors import Obj, Resource, Snapshot
from gitmedic.detectors.topology import callers_of, calls, expand_references


def _obj(kind: str, name: str, spec: dict[str, Any]) -> Obj:
    body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "ns"}}
    return Obj(Resource(kind, "ns", name), {**body, "spec": spec})


def _deployment(name: str, env: list[dict[str, str]]) -> Obj:
    pod = {"containers": [{"name": name, "image": "x:1", "env": env}]}
    return _obj(
        "Deployment", name, {"template": {"metadata": {"labels": {"app": name}}, "spec": pod}}
    )


def test_references_expand_like_the_kubelet() -> None:
    defined = {"NAME": "collector"}
    assert expand_references("http://$(NAME):4318", defined) == "http://collector:4318"
    assert expand_references("$$(NAME) $(UNKNOWN)", defined) == "$(NAME) $(UNKNOWN)"


def test_host_variable_takes_its_port_from_the_sibling_port_variable() -> None:
    snap = Snapshot(
        [
            _obj("Service", "flagd", {"selector": {"app": "flagd"}, "ports": [{"port": 8013}]}),
            _deployment(
                "proxy",
                [
                    {"name": "COLLECTOR", "value": "flagd"},
                    {"name": "FLAGD_HOST", "value": "$(COLLECTOR)"},
                    {"name": "FLAGD_PORT", "value": "8013"},
                    {"name": "OTHER_HOST", "value": "other"},
                    {"name": "OTHER_PORT", "value": "not-a-port"},
                ],
            ),
        ]
    )
    found = [(c.env, c.address.host, c.address.port, c.port_env) for c in calls(snap)]
    assert found == [("FLAGD_HOST", "flagd", 8013, "FLAGD_PORT"), ("OTHER_HOST", "other", None, "")]


def test_callers_exclude_the_workload_the_service_fronts() -> None:
    svc = _obj("Service", "cart", {"selector": {"app": "cart"}, "ports": [{"port": 7070}]})
    snap = Snapshot(
        [
            svc,
            _deployment("cart", [{"name": "SELF_ADDR", "value": "cart:7070"}]),
            _deployment("web", [{"name": "CART_ADDR", "value": "cart:7070"}]),
        ]
    )
    assert [c.caller.ref.name for c in callers_of(snap, svc)] == ["web"]
