"""Memory from an undone candidate or a model's fix: the fields to restore together next time.

A fix that commits only after an earlier candidate was deployed and undone
(restoring a release's image alone crash-looped, because the release had also
changed the entrypoint the old image does not have) is a fault the built-in
playbooks do not cover, even when they contributed to the fix: the next time
the same symptom shows on a container that also sets the field the first
candidate left alone, every field of the committed fix must go back together,
at the first attempt. The lesson is written as:

- a *refinement* rule (CEL, ``.gitmedic/rules/``): the built-in detector that
  found the symptom (e.g. ``pod-image-pull``), kept only where the same container
  also sets the fields the undone candidate did not touch (``command``), whatever
  their values;
- a playbook routed by that detector, whose recipe restores every field of the
  committed fix on the finding's container (``image`` and ``command``) from Git
  history.

The rule is built from field keys and detector ids only, never a name of the
app; the playbook from a fixed template (``bot/templates/memory/refined_playbook``).
Both are validated like any learned rule, on the incident's *live* snapshots: it
fires on the symptom before the fix, and is silent once the fix is deployed.

A fix a model found (no undone candidate) is the same lesson with nothing missed
before: the refinement of the runtime finding that opened the incident (a crash
loop) to containers that set the fields the model's fix changed (``command``).
Unlike a presence rule on ``command`` alone, which fires on every legitimate app
that sets one and is rightly refused, the refinement fires only with the symptom.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import yaml

from gitmedic.bot.memory.rule import Rule
from gitmedic.bot.memory.templated import Context
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.paths import Match

CONTAINER_LISTS = ("containers", "initContainers")
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")  # a container field a recipe path can name bare


@dataclass(frozen=True)
class Lesson:
    """What the rendering needs: the symptom, and the container fields of both fixes."""

    symptom: Finding
    fields: tuple[str, ...]  # every container field the committed fix changed
    missed: tuple[str, ...]  # those the undone candidate did not touch
    first: tuple[str, ...]  # those it did
    caused: tuple[str, ...]  # detectors of what the undone candidate caused (no object names)


def lesson_of(
    findings: Sequence[Finding],
    edits: Sequence[Edit],
    undone: Sequence[Edit],
    caused: Sequence[Finding],
) -> Lesson | str:
    """The lesson, or why there is none (the reason goes into the memory PR's notes)."""
    builtin = {d.id for d in builtin_registry()}
    for symptom in sorted(findings, key=lambda f: (-f.severity.rank, f.sort_key)):
        container = symptom.params.get("container")
        if symptom.detector not in builtin or not isinstance(container, str):
            continue
        fields = _fields(edits, symptom.resource, container)
        first = _fields(undone, symptom.resource, container)
        missed = tuple(f for f in fields if f not in first)
        if fields and missed:
            shown = tuple(dict.fromkeys(c.detector for c in caused))
            return Lesson(symptom, fields, missed, first, shown)
    return (
        "lesson: no symptom of a built-in detector names a container whose fields the "
        "committed fix changed beyond the undone candidate"
    )


def _fields(edits: Sequence[Edit], ref: Resource, container: str) -> tuple[str, ...]:
    """The keys of ``container`` (in ``ref``'s pod template) that ``edits`` change."""
    keys: list[str] = []
    for edit in edits:
        if edit.resource != ref:
            continue
        path = list(edit.path)
        for i in range(len(path) - 2):
            here, item, key = path[i], path[i + 1], path[i + 2]
            if here in CONTAINER_LISTS and item == Match("name", container):
                if isinstance(key, str) and _KEY.match(key):
                    keys.append(key)
                break
    return tuple(dict.fromkeys(keys))


def render_rule(lesson: Lesson, detector_id: str, playbook_id: str, ctx: Context) -> Rule:
    """The refinement as a CEL rule: the built-in's finding, kept where its container also
    sets every missed field (whatever their values: the fault class, not this incident)."""
    base = lesson.symptom.detector
    description = (
        f"{base} on a container that also sets {', '.join(lesson.missed)}: restore "
        f"{', '.join(lesson.fields)} together."
    )
    sets = " && ".join(f"has(c.{key})" for key in lesson.missed)
    match = (
        "has(finding.params.container) && has(finding.params.container_field) && "
        "finding.params.container_field in podSpec && "
        "podSpec[finding.params.container_field].exists(c, "
        f"type(c) == map && has(c.name) && c.name == finding.params.container && {sets})"
    )
    return Rule(
        id=detector_id,
        description=description,
        severity=Severity[ctx.severity],
        reads=tuple(sorted(builtin_kinds(base))),
        refines=base,
        match=match,
        message=f"{{kind}} {{name}}: {base} on container {{container}}, which also sets "
        f"{', '.join(lesson.missed)}",
        playbooks=(playbook_id,),
        remediation=f"Follow the {playbook_id} playbook: restore the fields together.",
    )


def builtin_kinds(detector_id: str) -> frozenset[str]:
    return next(d.spec.kinds for d in builtin_registry() if d.id == detector_id)


def render_playbook(lesson: Lesson, detector_id: str, playbook_id: str, ctx: Context) -> str:
    paths = ["{pod_spec}.{container_field}[name={container}]." + f for f in lesson.fields]
    front = {
        "id": playbook_id,
        "fault_class": playbook_id,
        "title": f"{lesson.symptom.detector} needs {', '.join(lesson.fields)} restored together",
        "detectors": [detector_id],
        "risk": "medium",
        "fix": {"object": "resource", "paths": paths},
    }
    values = {
        "front_matter": yaml.safe_dump(front, sort_keys=False, width=1000).strip(),
        "title": front["title"],
        "incident": ctx.incident,
        **_story(lesson, ctx),
        "detector_id": detector_id,
        "base_id": lesson.symptom.detector,
        "fields_text": ", ".join(f"`{f}`" for f in lesson.missed),
        "symptoms": "\n".join(f"- {s}" for s in ctx.symptoms) or "- (no finding named one)",
        "paths": "\n".join(f"- `{p}`" for p in paths),
        "diagnosis": ctx.diagnosis or "(none recorded)",
    }
    return _template("refined_playbook.md.tmpl").substitute(values)


def _story(lesson: Lesson, ctx: Context) -> dict[str, str]:
    """How the lesson was learned: from an undone candidate, or from a model's fix."""
    every = ", ".join(f"`{f}`" for f in lesson.fields)
    if not lesson.first and not lesson.caused:
        return {
            "learned": f"Learned by gitmedic from incident {ctx.incident}: no playbook covered it; "
            f"a model diagnosed it, and its fix, verified and kept, restored {every}.",
            "act": f"restore {every} as that fix did, with no model.",
            "verify_tail": "",
        }
    first = ", ".join(f"`{f}`" for f in lesson.first) or "other fields"
    caused = ", ".join(f"`{c}`" for c in lesson.caused) or "a regression"
    return {
        "learned": f"Learned by gitmedic from incident {ctx.incident}: its first candidate "
        f"restored only {first}, was deployed, and was undone because it caused: {caused}. "
        f"The fix that committed restored {every} together.",
        "act": "restoring one field alone is known to fail for this fault.",
        "verify_tail": ", and none of what the first candidate caused appears",
    }


def playbook_slug(lesson: Lesson) -> str:
    return f"{lesson.symptom.detector}-with-{'-'.join(lesson.missed)}".lower()[:60].strip("-")


def _template(name: str) -> string.Template:
    text = (resources.files("gitmedic.bot") / "templates" / "memory" / name).read_text()
    return string.Template(text)
