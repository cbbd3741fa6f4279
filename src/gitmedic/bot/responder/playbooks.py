"""Playbooks: Markdown with YAML front matter, routed to by detectors, with a fix recipe.

A playbook (``playbooks/<fault-class>/README.md`` built in, or learned under
``.gitmedic/playbooks/`` of the manifest repo) says, for people and for the LLM,
how to decide, triage, localize, verify and mitigate a fault class; its front
matter says which detectors route to it and, when the fault is a field of one
object, which field paths hold it. The responder restores those fields to their
last known-good value from Git history (the benchmarks judge a fix by the
original value, not by any value that works) and uses the ``fallback`` values,
computed from the finding's params, only when history has no good value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from gitmedic.bot.responder.template import TemplateError, expand, placeholders
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.reconciler import repofs

SECTIONS = ("decide", "triage", "localize", "verify", "mitigate")
POD_SPEC_PATH = {"Pod": "spec", "CronJob": "spec.jobTemplate.spec.template.spec"}


class PlaybookError(ValueError):
    """A playbook that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class FixRecipe:
    object: str  # "resource" or "related:<Kind>"
    paths: tuple[str, ...]
    fallback: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Playbook:
    id: str
    fault_class: str
    title: str
    detectors: tuple[str, ...]
    risk: str
    source: str
    body: str
    rules: tuple[str, ...] = ()
    runtime_only: bool = False
    fix: FixRecipe | None = None

    def routes(self, finding: Finding) -> bool:
        return finding.detector in self.detectors and (not self.rules or finding.rule in self.rules)


@dataclass(frozen=True)
class BoundFix:
    """A recipe bound to one finding: which object, which concrete paths, fallbacks."""

    playbook: str
    target: Resource
    paths: tuple[str, ...]
    fallback: Mapping[str, Any]


def parse_playbook(text: str, source: str) -> Playbook:
    front, body = _split_front_matter(text, source)
    problems = _schema_problems(front)
    if problems:
        raise PlaybookError(f"{source}: " + "; ".join(problems))
    missing = [s for s in SECTIONS if f"## {s}" not in body.lower()]
    if missing:
        raise PlaybookError(f"{source}: missing sections {', '.join('## ' + s for s in missing)}")
    fix = front.get("fix")
    return Playbook(
        id=front["id"],
        fault_class=front["fault_class"],
        title=front["title"],
        detectors=tuple(front["detectors"]),
        rules=tuple(front.get("rules", ())),
        risk=front["risk"],
        runtime_only=bool(front.get("runtime_only", False)),
        fix=FixRecipe(fix["object"], tuple(fix["paths"]), dict(fix.get("fallback", {})))
        if fix
        else None,
        source=source,
        body=body,
    )


def builtin_playbooks() -> list[Playbook]:
    root = resources.files("gitmedic") / "playbooks"
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        readme = entry / "README.md"
        if entry.is_dir() and readme.is_file():
            out.append(parse_playbook(readme.read_text(), f"playbooks/{entry.name}/README.md"))
    return out


def repo_playbooks(repo: Path) -> list[Playbook]:
    """Learned playbooks in ``.gitmedic/playbooks/<class>/README.md`` of a manifest repo."""
    root = repo / ".gitmedic" / "playbooks"
    out = []
    for p in sorted(root.glob("*/README.md")):
        rel = p.relative_to(repo).as_posix()
        try:
            text = repofs.read_text(repo, rel)
        except repofs.LinkRefused:
            continue  # never read through a link; `gitmedic memory check` names it
        out.append(parse_playbook(text, rel))
    return out


def route(playbooks: Iterable[Playbook], finding: Finding) -> list[Playbook]:
    """Playbooks for a finding: learned ones first (they are more specific), then by id."""
    matching = [p for p in playbooks if p.routes(finding)]
    return sorted(matching, key=lambda p: (not p.source.startswith(".gitmedic/"), p.id))


def bind(playbook: Playbook, finding: Finding) -> BoundFix:
    if playbook.fix is None:
        raise PlaybookError(f"{playbook.source}: has no fix recipe")
    params = {
        **finding.params,
        "name": finding.resource.name,
        "namespace": finding.resource.namespace,
        "pod_spec": POD_SPEC_PATH.get(finding.resource.kind, "spec.template.spec"),
    }
    try:
        paths = tuple(str(expand(p, params)) for p in playbook.fix.paths)
        fallback = {
            str(expand(k, params)): _expand_value(v, params)
            for k, v in playbook.fix.fallback.items()
        }
    except TemplateError as exc:
        raise PlaybookError(f"{playbook.source}: {exc}") from None
    return BoundFix(playbook.id, _target(playbook.fix.object, finding), paths, fallback)


def _expand_value(value: Any, params: Mapping[str, Any]) -> Any:
    if isinstance(value, str):
        return expand(value, params)
    if isinstance(value, list):
        return [_expand_value(v, params) for v in value]
    if isinstance(value, dict):
        return {k: _expand_value(v, params) for k, v in value.items()}
    return value


def _target(spec: str, finding: Finding) -> Resource:
    if spec == "resource":
        return finding.resource
    kind = spec.split(":", 1)[1]
    for ref in finding.related:
        if ref.kind == kind:
            return ref
    raise PlaybookError(f"the finding on {finding.resource} names no related {kind}")


def _split_front_matter(text: str, source: str) -> tuple[dict[str, Any], str]:
    from gitmedic.reconciler.manifests.parse import load_strict_yaml

    if not text.startswith("---\n"):
        raise PlaybookError(f"{source}: must start with YAML front matter between '---' lines")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise PlaybookError(f"{source}: the front matter is not closed by a '---' line")
    try:
        front = load_strict_yaml(text[4:end], source)
    except ValueError as exc:
        raise PlaybookError(str(exc)) from None
    if not isinstance(front, dict):
        raise PlaybookError(f"{source}: the front matter must be a mapping")
    return front, text[end + 5 :]


def _schema_problems(front: dict[str, Any]) -> list[str]:
    import jsonschema

    schema = json.loads((resources.files(__package__) / "playbook_schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{'.'.join(str(p) for p in e.absolute_path) or 'front matter'}: {e.message}"
        for e in validator.iter_errors(front)
    ]
    fix = front.get("fix") or {}
    for path in [*fix.get("paths", []), *fix.get("fallback", {})]:
        if isinstance(path, str) and not placeholders(path) and path.count("[") != path.count("]"):
            problems.append(f"fix path {path!r} has unbalanced brackets")
    return sorted(problems)
