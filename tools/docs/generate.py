"""Write the docs site's reference pages from the code, so they cannot drift from it.

    python tools/docs/generate.py docs/reference

- ``config.md``: every key of ``.gitmedic/config.yaml``, walked from the JSON
  schema gitmedic validates the file with (type, default, allowed values, what it
  means), ``$ref`` followed;
- ``detectors.md``: every built-in detector from the registry (what it finds,
  severity, scope, kinds, remediation, what makes it uncertain), with a positive
  and a negative example taken from its test cases (``tests/detectors/cases``),
  as kube-linter's checks reference does;
- ``cli.md``: every command and option, from the CLI's own argument parser.

mkdocs then builds the site with ``--strict`` (``mkdocs.yml``); the pages are not
committed (``docs/reference/`` is ignored), so they are the code's every time.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "src/gitmedic/reconciler/config/schema.json"
CASES = ROOT / "tests/detectors/cases"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/docs/generate.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    pages = {"config.md": config_page(), "detectors.md": detectors_page(), "cli.md": cli_page()}
    for name, text in pages.items():
        (out / name).write_text(text)
    print(f"wrote {', '.join(sorted(pages))} in {out}")
    return 0


# --- .gitmedic/config.yaml ---------------------------------------------------------------


def config_page() -> str:
    schema = json.loads(SCHEMA.read_text())
    lines = [
        "# Configuration reference: `.gitmedic/config.yaml`",
        "",
        "Generated from the JSON schema gitmedic validates the file with "
        "(`src/gitmedic/reconciler/config/schema.json`). `gitmedic init` writes a "
        "first version; `gitmedic memory check` and every command that reads the file "
        "refuse it, naming the file and line, when it does not match.",
        "",
        "| Key | Type | Default | Description |",
        "|-----|------|---------|-------------|",
    ]
    lines += [_config_row(path, node, required) for path, node, required in _walk(schema, schema)]
    return "\n".join(lines) + "\n"


def _walk(
    schema: Mapping[str, Any],
    node: Mapping[str, Any],
    prefix: str = "",
    seen: frozenset[str] = frozenset(),
) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
    node, seen = _resolve(schema, node, seen)
    required = set(node.get("required", ()))
    for key, child in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        resolved, child_seen = _resolve(schema, child, seen)
        yield path, resolved, key in required
        if resolved.get("type") == "object" or "properties" in resolved:
            yield from _walk(schema, resolved, f"{path}.", child_seen)
        items = resolved.get("items")
        if isinstance(items, Mapping):
            item, item_seen = _resolve(schema, items, child_seen)
            if "properties" in item:
                yield from _walk(schema, item, f"{path}[].", item_seen)


def _resolve(
    schema: Mapping[str, Any], node: Mapping[str, Any], seen: frozenset[str]
) -> tuple[Mapping[str, Any], frozenset[str]]:
    ref = node.get("$ref")
    if not isinstance(ref, str) or ref in seen:
        return node, seen
    target: Any = schema
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return merged, seen | {ref}


def _config_row(path: str, node: Mapping[str, Any], required: bool) -> str:
    kind = node.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if "const" in node:
        kind = f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        kind = " \\| ".join(f"`{v}`" for v in node["enum"])
    default = f"`{json.dumps(node['default'])}`" if "default" in node else ""
    text = str(node.get("description", "")).replace("\n", " ").replace("|", "\\|")
    if required:
        text = f"**Required.** {text}"
    return f"| `{path}` | {kind} | {default} | {text} |"


# --- detectors ---------------------------------------------------------------------------


def detectors_page() -> str:
    from gitmedic.detectors.builtin import builtin_registry

    registry = list(builtin_registry())
    lines = [
        "# Detector reference",
        "",
        "Generated from the detector registry; each example is one of the detector's own "
        "test cases (`tests/detectors/cases/<id>/`). A **critical** means the objects "
        "alone prove the app breaks; where a verdict depends on what they do not show, "
        "the detector says so at a lower severity (*Uncertain when* below).",
        "",
        "| Detector | Severity | Scope | What it finds |",
        "|----------|----------|-------|---------------|",
    ]
    lines += [
        f"| [`{d.id}`](#{d.id}) | {d.spec.severity.value} | {d.spec.scope.value} | "
        f"{_one_line(d.spec.description)} |"
        for d in registry
    ]
    for det in registry:
        lines += ["", *_detector_section(det)]
    return "\n".join(lines) + "\n"


def _detector_section(det: Any) -> list[str]:
    spec = det.spec
    lines = [
        f"## {spec.id}",
        "",
        _one_line(spec.description),
        "",
        f"- **Default severity:** {spec.severity.value}",
        f"- **Judges:** {spec.scope.value} state",
        f"- **Reads:** {', '.join(f'`{k}`' for k in sorted(spec.kinds))}",
        f"- **Remediation:** {_one_line(spec.remediation)}",
    ]
    if spec.playbooks:
        lines.append(f"- **Playbooks:** {', '.join(f'`{p}`' for p in spec.playbooks)}")
    if spec.certain_because:
        lines.append(f"- **Certain because:** {_one_line(spec.certain_because)}")
    for unsure in spec.uncertain_when:
        lines.append(
            f"- **Uncertain when** {_one_line(unsure.unseen)}: reported lower, "
            f"certain if {_one_line(unsure.certain_if)}"
        )
    positive, negative = _examples(spec.id)
    for title, case in (("Finds", positive), ("Passes", negative)):
        if case is None:
            continue
        path, body = case
        lines += ["", f"**{title}** (`{path.relative_to(ROOT)}`):", "", "```yaml"]
        lines += yaml.safe_dump_all(body.get("objects") or [], sort_keys=False).rstrip().split("\n")
        lines.append("```")
        for expect in body.get("expect") or []:
            rule = f" `{expect['rule']}`" if expect.get("rule") else ""
            severity = f" ({expect['severity']})" if expect.get("severity") else ""
            lines.append(f"- {expect['kind']} `{expect['name']}`{rule}{severity}")
    return lines


def _examples(
    detector: str,
) -> tuple[tuple[Path, dict[str, Any]] | None, tuple[Path, dict[str, Any]] | None]:
    """The smallest positive and negative case of a detector (smallest reads best)."""
    cases = []
    for path in sorted((CASES / detector).glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        cases.append((len(path.read_text()), path, body))
    positives = sorted((c for c in cases if c[2].get("expect")), key=lambda c: c[0])
    negatives = sorted((c for c in cases if not c[2].get("expect")), key=lambda c: c[0])
    first = positives[0][1:] if positives else None
    second = negatives[0][1:] if negatives else None
    return first, second


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- the CLI -----------------------------------------------------------------------------


def cli_page() -> str:
    from gitmedic.bot.cli.main import build_parser

    lines = [
        "# Command reference",
        "",
        "Generated from `gitmedic`'s argument parser; `gitmedic COMMAND --help` prints the "
        "same. Shell completion: `gitmedic completion bash` (or `zsh`, `tcsh`).",
    ]
    lines += _commands(build_parser(), "gitmedic")
    return "\n".join(lines) + "\n"


def _commands(parser: argparse.ArgumentParser, name: str) -> Iterator[str]:
    yield from ("", f"## `{name}`", "", _one_line(parser.description or ""), "")
    yield "```text"
    yield from parser.format_usage().rstrip().split("\n")
    yield "```"
    options = [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction)]
    rows = [a for a in options if not isinstance(a, argparse._HelpAction)]
    if rows:
        yield from ("", "| Argument | Description |", "|----------|-------------|")
        for action in rows:
            names = ", ".join(action.option_strings) or action.dest
            choices = f" (one of: {', '.join(map(str, action.choices))})" if action.choices else ""
            yield f"| `{names}` | {_one_line(action.help or '')}{choices} |"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for sub_name, sub in action.choices.items():
                sub.description = sub.description or helps.get(sub_name, "")
                yield from _commands(sub, f"{name} {sub_name}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
