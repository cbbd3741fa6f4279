"""The LLM strategy: the agent loop over read-only tools, its edits validated here.

Used only for findings no playbook and no bisect explained, and only when a model
is configured (``llm.model`` in ``.gitmedic/config.yaml`` or ``GITMEDIC_LLM_MODEL``;
the key from the environment variable the config names). The model can only
propose: each edit it proposed becomes an :class:`Edit` only after validation
(the file exists in the repo, the object is in it, the path resolves, the edit
applies to the current content); an invalid one is dropped with its reason, and
what survives goes through the same gate as any other proposal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.responder.llm import Budget, Completion, data_block, run_agent
from gitmedic.bot.responder.llm_tools import read_only_tools
from gitmedic.bot.responder.playbooks import Playbook
from gitmedic.bot.responder.proposal import evidence_of
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.config import LlmConfig
from gitmedic.reconciler.manifests.documents import (
    EditError,
    blob_sha,
    find_object,
    split_chunks,
    split_lines,
)
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import PathError, lookup, parse_path

MODEL_ENV = "GITMEDIC_LLM_MODEL"


@dataclass(frozen=True)
class LlmOutcome:
    fix: Fix | None
    rejected: tuple[str, ...]
    tokens: int
    cost_usd: float
    diagnosis: str


def model_of(config: LlmConfig | None) -> str:
    """The configured model, or '' when there is none (then the strategy is skipped)."""
    return (config.model if config else "") or os.environ.get(MODEL_ENV, "")


def llm_fix(
    ws: Workspace,
    findings: Sequence[Finding],
    *,
    config: LlmConfig,
    playbooks: Sequence[Playbook],
    live: Snapshot | None,
    completion: Completion | None,
) -> LlmOutcome:
    tools = read_only_tools(ws.repo, ws.states.at(ws.head), live, playbooks)
    result = run_agent(
        model=model_of(config),
        incident=_incident_text(ws, findings),
        tools=tools,
        budget=Budget(config.max_steps, config.max_tokens, config.max_cost_usd),
        completion=completion,
        api_base=config.api_base or None,
        api_key=os.environ.get(config.api_key_env) if config.api_key_env else None,
    )
    edits, contents, rejected = validate_edits(ws, result.edits)
    diagnosis = result.diagnosis or f"the model stopped without a diagnosis ({result.stopped})"
    fix = Fix("llm", tuple(edits), contents, diagnosis) if edits else None
    usage = result.usage
    return LlmOutcome(fix, tuple(rejected), usage.tokens, usage.cost_usd, diagnosis)


def _incident_text(ws: Workspace, findings: Sequence[Finding]) -> str:
    evidence = json.dumps([dict(e) for e in evidence_of(findings)], indent=1)
    return (
        f"Application manifests: {ws.repo.path or '(repo root)'} (default namespace "
        f"{ws.repo.namespace}), at commit {ws.head[:12]}. These findings persist and no "
        f"playbook or regression bisect explained them:\n"
        f"{data_block('findings', evidence)}\n"
        "Find the manifest change that causes them and propose edits restoring the last "
        "known-good configuration."
    )


def validate_edits(
    ws: Workspace, proposed: Sequence[Mapping[str, Any]]
) -> tuple[list[Edit], dict[str, str], list[str]]:
    """Keep the edits that apply, in order; each dropped one gets a reason."""
    edits: list[Edit] = []
    contents: dict[str, str] = {}
    rejected: list[str] = []
    for number, raw in enumerate(proposed, start=1):
        try:
            edit = _to_edit(ws, raw, contents)
            contents = ws.applied([edit], contents)
        except (EditError, PathError, KeyError, TypeError, ValueError) as exc:
            rejected.append(f"edit {number} ({_shown(raw)}): {exc}")
            continue
        edits.append(edit)
    return edits, contents, rejected


def _to_edit(ws: Workspace, raw: Mapping[str, Any], contents: Mapping[str, str]) -> Edit:
    file = str(raw["file"])
    if ws.repo.is_link(file):
        raise EditError(f"{file} is a symbolic link: gitmedic does not edit through links")
    if not ws.repo.exists(file):
        raise EditError(f"{file} does not exist in the repository")
    ref = Resource(
        str(raw["kind"]), str(raw.get("namespace") or ws.repo.namespace), str(raw["name"])
    )
    content = ws.content(file, contents)
    chunks = split_chunks(split_lines(content))
    doc = chunks[find_object(chunks, ref, file)].data()
    op, path = Op(str(raw["op"])), parse_path(str(raw["path"]))
    target = path if op in (Op.SET, Op.REMOVE, Op.APPEND) else path[:-1]
    if target and not lookup(doc, target)[0]:
        raise EditError(f"{raw['path']} does not resolve in {ref} of {file}")
    return Edit(op, file, ref, path, raw.get("value")).with_base(blob_sha(content.encode()))


def _shown(raw: Mapping[str, Any]) -> str:
    what = f"{raw.get('kind', '?')}/{raw.get('name', '?')}"
    return f"{raw.get('op', '?')} {raw.get('path', '?')} of {what}"
