"""The lesson of an undone candidate: which container fields the first fix missed.

End to end (reflection writing it, the guard validating it on live snapshots, the
next incident fixed by it at the first attempt) is in tests/bot/test_retry_extends.py
and the demo's test; here, the choice of symptom and fields, and the refusals.
"""

from __future__ import annotations

from typing import Any

from gitmedic.bot.memory.learned import rule_findings
from gitmedic.bot.memory.lesson import (
    Lesson,
    lesson_of,
    playbook_slug,
    render_playbook,
    render_rule,
)
from gitmedic.bot.memory.rule import compile_rule, parse_rule
from gitmedic.bot.memory.rule import render_rule as rule_text
from gitmedic.bot.memory.templated import Context
from gitmedic.bot.responder.playbooks import parse_playbook
from gitmedic.detectors import Obj, Snapshot
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Mode
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import parse_path

REF = Resource("Deployment", "shop", "catalog")
CONTAINER = "spec.template.spec.containers[name=server]"
PULL = Finding("pod-image-pull", "image-pull", Severity.CRITICAL, REF,
               "container server cannot pull image shop-catalog:2.1.0",
               params={"container": "server", "container_field": "containers"})  # fmt: skip
UNAVAILABLE = Finding("deployment-unavailable", "unavailable", Severity.CRITICAL, REF,
                      "Deployment catalog has 0/1 replicas available")  # fmt: skip
CRASH = Finding("pod-crashloop", "crashloop", Severity.CRITICAL, REF, "crash-looping",
                params={"container": "server"})  # fmt: skip


def _edit(op: Op, field: str, value: object = None) -> Edit:
    return Edit(op, "apps/shop/catalog.yaml", REF, parse_path(f"{CONTAINER}.{field}"), value)


IMAGE = _edit(Op.SET, "image", "ghcr.io/gitmedic/shop-catalog:2.0.1")
COMMAND = _edit(Op.REMOVE, "command")


def test_the_lesson_names_the_symptom_and_the_fields_the_undone_candidate_missed() -> None:
    found = lesson_of([UNAVAILABLE, PULL], [IMAGE, COMMAND], [IMAGE], [CRASH])

    assert isinstance(found, Lesson)
    assert found.symptom == PULL  # the one that names a container, not the Deployment-wide one
    assert (found.fields, found.missed, found.first) == (("image", "command"), ("command",),
                                                          ("image",))  # fmt: skip
    assert found.caused == ("pod-crashloop",)
    assert playbook_slug(found) == "pod-image-pull-with-command"


def test_no_lesson_when_the_undone_candidate_already_touched_every_field() -> None:
    found = lesson_of([PULL], [IMAGE], [IMAGE], [CRASH])

    assert isinstance(found, str) and "beyond the undone candidate" in found


def test_no_lesson_from_a_finding_of_no_builtin_detector_or_without_a_container() -> None:
    learned = Finding("learned-x", "r", Severity.CRITICAL, REF, "x", params={"container": "server"})

    assert isinstance(lesson_of([learned, UNAVAILABLE], [IMAGE, COMMAND], [IMAGE], []), str)


def test_the_playbook_restores_every_field_on_the_findings_container_and_names_no_object() -> None:
    found = lesson_of([PULL], [IMAGE, COMMAND], [IMAGE], [CRASH])
    assert isinstance(found, Lesson)
    ctx = Context("i-1", "bisect", "abc", "diagnosis", ("`pod-image-pull`: x",), "CRITICAL")

    text = render_playbook(found, "learned-p", "p", ctx)
    book = parse_playbook(text, "candidate")

    assert book.fix is not None and book.detectors == ("learned-p",)
    assert list(book.fix.paths) == [
        "{pod_spec}.{container_field}[name={container}].image",
        "{pod_spec}.{container_field}[name={container}].command",
    ]
    assert "catalog" not in text.split("## Diagnosis")[0]


def _pulling(name: str, image: str, **container: Any) -> list[Obj]:
    """A Deployment whose one pod cannot pull ``image`` (live objects, their owner chain)."""
    spec = {"name": "app", "image": image, **container}
    owner = {"kind": "Deployment", "name": name, "controller": True}
    bodies: list[dict[str, Any]] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {"template": {"spec": {"containers": [spec]}}},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": f"{name}-1", "ownerReferences": [owner]},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-1-x",
                "ownerReferences": [
                    {"kind": "ReplicaSet", "name": f"{name}-1", "controller": True}
                ],
            },
            "spec": {"containers": [spec]},
            "status": {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "app",
                        "image": image,
                        "state": {"waiting": {"reason": "ImagePullBackOff"}},
                    }
                ],
            },
        },
    ]
    kinds = [
        ("Deployment", "apps/v1", name),
        ("ReplicaSet", "apps/v1", f"{name}-1"),
        ("Pod", "v1", f"{name}-1-x"),
    ]
    return [
        Obj(Resource(kind, "other", obj_name, api), body)
        for (kind, api, obj_name), body in zip(kinds, bodies, strict=True)
    ]


def test_the_lesson_rule_generalises_to_another_object_with_other_values() -> None:
    found = lesson_of([PULL], [IMAGE, COMMAND], [IMAGE], [CRASH])
    assert isinstance(found, Lesson)
    ctx = Context("i-1", "bisect", "abc", "", (), "CRITICAL")
    rule = render_rule(found, "learned-p", "p", ctx)
    assert parse_rule(rule_text(rule), "r.yaml") == rule  # the file round-trips
    compiled = compile_rule(rule, "r.yaml")
    live = Snapshot(
        [
            *_pulling("billing", "reg/billing:9.9", command=["/bin/billing", "--grpc"]),
            *_pulling("quotes", "reg/quotes:1.0"),
        ],  # no command: the built-in's playbook fits
        mode=Mode.LIVE,
    )

    hits = rule_findings(compiled, live)

    assert [(f.resource.name, f.params["container"]) for f in hits] == [("billing", "app")]
    assert hits[0].summary == (
        "Deployment billing: pod-image-pull on container app, which also sets command"
    )
    assert hits[0].playbooks == ("p",) and hits[0].rule == "image-pull"
    assert "catalog" not in rule_text(rule) and "2.1.0" not in rule_text(rule)


def test_the_lesson_rule_judges_a_workload_with_more_pods_than_the_input_bound() -> None:
    # The built-in's finding relates every pod; the rule reads the finding without that
    # list, so a large workload stays within the input bound.
    found = lesson_of([PULL], [IMAGE, COMMAND], [IMAGE], [CRASH])
    assert isinstance(found, Lesson)
    ctx = Context("i-1", "bisect", "abc", "", (), "CRITICAL")
    compiled = compile_rule(render_rule(found, "learned-p", "p", ctx), "r.yaml")
    objects = _pulling("billing", "reg/billing:9.9", command=["/bin/billing"])
    pod = objects[-1]
    pods = [
        Obj(
            Resource("Pod", "other", f"billing-1-{i}", "v1"),
            {**pod.body, "metadata": {**pod.body["metadata"], "name": f"billing-1-{i}"}},
        )
        for i in range(300)
    ]
    live = Snapshot([*objects[:-1], *pods], mode=Mode.LIVE)

    [hit] = rule_findings(compiled, live)

    assert hit.resource.name == "billing" and len(hit.related) == 300


CRASH_AT = Finding(
    "pod-crashloop",
    "crashloop",
    Severity.CRITICAL,
    REF,
    "crash-looping",
    params={"container": "server", "container_field": "containers"},
)


def test_a_models_fix_is_a_lesson_refining_the_runtime_finding_with_what_it_changed() -> None:
    # No candidate was undone: the model restored `command` at the first attempt.
    found = lesson_of([UNAVAILABLE, CRASH_AT], [COMMAND], [], [])

    assert isinstance(found, Lesson)
    assert found.symptom == CRASH_AT and (found.missed, found.first) == (("command",), ())
    ctx = Context("i-1", "llm", "abc", "the entrypoint is not in the image", (), "CRITICAL")
    rule = render_rule(found, "learned-p", "p", ctx)
    assert rule.refines == "pod-crashloop" and "has(c.command)" in rule.match
    text = render_playbook(found, "learned-p", "p", ctx)
    assert "a model diagnosed it" in text and "undone" not in text
    book = parse_playbook(text, "candidate")
    assert book.fix is not None
    assert list(book.fix.paths) == ["{pod_spec}.{container_field}[name={container}].command"]
