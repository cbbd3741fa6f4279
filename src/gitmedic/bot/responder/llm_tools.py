"""The LLM's read-only tools: repo files, snapshot objects and events, playbooks, architecture.

Every answer is redacted before it leaves the process and cluster or repo text
is wrapped by :func:`~.llm.data_block`. Manifest files need more than pattern
redaction (a Secret's base64 value looks like nothing in particular), so
:func:`redact_manifest` parses the file, takes every value that
:func:`~gitmedic.reconciler.redact.redact_object` masks (Secret data, env values
and ConfigMap keys named like credentials) and masks those exact strings in the
text, keeping the file's lines and comments for the model; when a masked value
still reads back from the result (a block scalar, an escaped quote), the
redacted documents are rendered instead. A file that does not parse is not shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from gitmedic.bot.responder.llm import Tool, data_block
from gitmedic.bot.responder.playbooks import Playbook
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler import repofs
from gitmedic.reconciler.git import SYMLINK_MODE
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.redact import MASK, redact_object, redact_text

MAX_LISTED = 300
ARCHITECTURE = ".gitmedic/architecture.md"


def redact_manifest(text: str) -> str:
    try:
        docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return "(this file does not parse as YAML; it is not shown)"
    secrets: set[str] = set()
    for doc in docs:
        _sensitive(doc, redact_object(doc), secrets)
    masked = text
    for value in sorted(secrets, key=len, reverse=True):
        masked = masked.replace(value, MASK)
    masked = redact_text(masked)
    if _leaks(masked, secrets):
        return redact_text(yaml.safe_dump_all([redact_object(d) for d in docs], sort_keys=False))
    return masked


def _sensitive(original: Any, redacted: Any, out: set[str]) -> None:
    if isinstance(original, dict) and isinstance(redacted, dict):
        for k, v in original.items():
            _sensitive(v, redacted.get(k), out)
    elif isinstance(original, list) and isinstance(redacted, list):
        for a, b in zip(original, redacted, strict=False):
            _sensitive(a, b, out)
    elif redacted == MASK and original not in (None, "", MASK):
        out.add(str(original))


def _leaks(text: str, secrets: set[str]) -> bool:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return True
    found: set[str] = set()
    for doc in docs:
        _scalars(doc, found)
    return bool(found & secrets)


def _scalars(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _scalars(v, out)
    elif isinstance(value, list):
        for v in value:
            _scalars(v, out)
    elif value is not None:
        out.add(str(value))


def read_only_tools(
    repo: ManifestRepo,
    desired: Snapshot,
    live: Snapshot | None,
    playbooks: Sequence[Playbook],
) -> list[Tool]:
    def list_files(args: Mapping[str, Any]) -> str:
        prefix = str(args.get("prefix") or "")
        listing = repo.git.run("ls-files", "-s", "-z", "--", prefix or ".").stdout.split("\0")
        entries = [entry.partition("\t") for entry in listing if entry]
        shown = [
            f"{name} (a symbolic link: not readable)" if meta.startswith(SYMLINK_MODE) else name
            for meta, _, name in entries
        ][:MAX_LISTED]
        return data_block("git ls-files", "\n".join(shown))

    def read_file(args: Mapping[str, Any]) -> str:
        path = str(args["path"])
        text = repo.read(path)
        safe = redact_manifest(text) if path.endswith((".yaml", ".yml", ".json")) else text
        return data_block(path, safe)

    def get_object(args: Mapping[str, Any]) -> str:
        snap = _state(args)
        ns = str(args.get("namespace") or repo.namespace)
        obj = snap.get(str(args["kind"]), ns, str(args["name"]))
        if obj is None:
            return (
                f"no {args['kind']} {ns}/{args['name']} in the {args.get('state', 'desired')} state"
            )
        where = f" ({obj.source.file}:{obj.source.line})" if obj.source else ""
        body = json.dumps(redact_object(obj.body), indent=1, sort_keys=True)
        return data_block(f"{obj.ref}{where}", body)

    def list_objects(args: Mapping[str, Any]) -> str:
        snap = _state(args)
        kind = args.get("kind")
        refs = [o.ref for o in snap if kind in (None, "", o.kind)][:MAX_LISTED]
        return data_block("objects", "\n".join(str(r) for r in refs))

    def events(args: Mapping[str, Any]) -> str:
        if live is None:
            return "no live state was captured for this incident"
        ns = str(args.get("namespace") or repo.namespace)
        ref = Resource(str(args["kind"]), ns, str(args["name"]))
        lines = [
            f"{e.body.get('reason', '')}: {e.body.get('message', '')}" for e in live.events_for(ref)
        ]
        return data_block(f"events of {ref}", "\n".join(lines) or "(none)")

    def read_playbook(args: Mapping[str, Any]) -> str:
        wanted = args.get("id")
        chosen = [p for p in playbooks if wanted in (None, "", p.id)]
        if not wanted:
            return "\n".join(
                f"{p.id}: {p.title} (detectors {', '.join(p.detectors)})" for p in chosen
            )
        return data_block(chosen[0].source, chosen[0].body) if chosen else f"no playbook {wanted}"

    def read_architecture(args: Mapping[str, Any]) -> str:
        try:
            text = repofs.read_text(repo.root, ARCHITECTURE)
        except repofs.LinkRefused as exc:
            return f"error: {exc}"
        except OSError:
            return "no architecture summary in this repo"
        return data_block(ARCHITECTURE, text)

    def _state(args: Mapping[str, Any]) -> Snapshot:
        if args.get("state") == "live":
            if live is None:
                raise ValueError("no live state was captured for this incident")
            return live
        return desired

    return [
        Tool("list_files", "List repo files under a prefix.", _schema(prefix="string"), list_files),
        Tool(
            "read_file",
            "Read a repo file (secrets masked).",
            _schema("path", path="string"),
            read_file,
        ),
        Tool(
            "get_object",
            "One object of the desired (default) or live state.",
            _schema(
                "kind", "name", kind="string", name="string", namespace="string", state="string"
            ),
            get_object,
        ),
        Tool(
            "list_objects",
            "Objects of a kind in the desired or live state.",
            _schema(kind="string", state="string"),
            list_objects,
        ),
        Tool(
            "events",
            "Live events of an object.",
            _schema("kind", "name", kind="string", name="string", namespace="string"),
            events,
        ),
        Tool(
            "read_playbook",
            "List playbooks (no id) or read one.",
            _schema(id="string"),
            read_playbook,
        ),
        Tool("read_architecture", "The repo's architecture summary.", _schema(), read_architecture),
    ]


def _schema(*required: str, **props: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(required),
        "properties": {k: {"type": v} for k, v in props.items()},
    }
