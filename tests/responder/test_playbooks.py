"""Playbooks parse strictly, route by detector and rule, and bind a finding's params safely."""

from __future__ import annotations

import pytest

from gitmedic.bot.responder.playbooks import (
    PlaybookError,
    bind,
    builtin_playbooks,
    parse_playbook,
    route,
)
from gitmedic.detectors.finding import Finding, Resource, Severity

SVC = Resource("Service", "shop", "catalog")
GOOD = """---
id: demo-fault
fault_class: demo-fault
title: Demo
detectors: [demo]
rules: [demo-rule]
risk: low
fix:
  object: related:Deployment
  paths: ["{pod_spec}.containers[name={container}].image"]
  fallback:
    "{pod_spec}.containers[name={container}].image": "{images[0]}"
---
## Decide
## Triage
## Localize
## Verify
## Mitigate
"""


def finding(**params: object) -> Finding:
    return Finding(
        "demo", "demo-rule", Severity.CRITICAL, SVC, "s",
        related=(Resource("Deployment", "shop", "catalog", "apps/v1"),), params=params,
    )  # fmt: skip


def test_builtin_playbooks_parse_and_have_unique_ids() -> None:
    books = builtin_playbooks()
    assert len({b.id for b in books}) == len(books) >= 3


def test_binding_fills_paths_and_keeps_value_types() -> None:
    pb = parse_playbook(GOOD, "x.md")
    bound = bind(pb, finding(container="server", images=["shop:1.2", "shop:1.1"]))
    assert bound.target == Resource("Deployment", "shop", "catalog", "apps/v1")
    assert bound.paths == ("spec.template.spec.containers[name=server].image",)
    assert bound.fallback == {"spec.template.spec.containers[name=server].image": "shop:1.2"}
    port = next(b for b in builtin_playbooks() if b.id == "service-target-port")
    served = Finding("service-target-port", "target-port-undeclared", Severity.CRITICAL, SVC, "s",
                     params={"port_index": 0, "served_ports": [3550]})  # fmt: skip
    assert bind(port, served).fallback == {"spec.ports[0].targetPort": 3550}


def test_routing_honours_rules() -> None:
    pb = parse_playbook(GOOD, "x.md")
    assert route([pb], finding()) == [pb]
    other = Finding("demo", "other-rule", Severity.CRITICAL, SVC, "s")
    assert route([pb], other) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "must start with YAML front matter"),
        ("---\nid: x\n", "not closed by a '---' line"),
        (GOOD.replace("risk: low", "risk: tiny"), "risk: 'tiny' is not one of"),
        (GOOD.replace("## Verify\n", ""), "missing sections ## verify"),
        (GOOD.replace("id: demo-fault", "id: demo-fault\nid: again"), "duplicate key 'id'"),
        (GOOD.replace("title: Demo", "title: Demo\nsurprise: 1"), "'surprise' was unexpected"),
    ],
)
def test_bad_playbooks_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(PlaybookError, match=message) as err:
        parse_playbook(text, "pb/README.md")
    assert str(err.value).startswith("pb/README.md")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "the finding has no param 'container'"),
        ({"container": "server", "images": []}, "'0' not found"),
    ],
)
def test_binding_errors_name_the_placeholder(params: dict[str, object], message: str) -> None:
    with pytest.raises(PlaybookError, match=message):
        bind(parse_playbook(GOOD, "x.md"), finding(**params))


def test_placeholders_cannot_reach_attributes_or_format_specs() -> None:
    evil = GOOD.replace('"{images[0]}"', '"{images.__class__}"')
    with pytest.raises(PlaybookError, match="not found"):
        bind(parse_playbook(evil, "x.md"), finding(container="c", images=["a"]))
    spec = GOOD.replace('"{images[0]}"', '"{images[0]!r:>10}"')
    with pytest.raises(PlaybookError, match="only \\{param\\}"):
        bind(parse_playbook(spec, "x.md"), finding(container="c", images=["a"]))
