"""The lesson of an undone candidate: which container fields the first fix missed.

End to end (reflection writing it, the guard validating it on live snapshots, the
next incident fixed by it at the first attempt) is in tests/bot/test_retry_extends.py
and the demo's test; here, the choice of symptom and fields, and the refusals.
"""

from __future__ import annotations

from gitmedic.bot.memory.lesson import Lesson, lesson_of, playbook_slug, render_playbook
from gitmedic.bot.memory.templated import Context
from gitmedic.bot.responder.playbooks import parse_playbook
from gitmedic.detectors.finding import Finding, Resource, Severity
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
