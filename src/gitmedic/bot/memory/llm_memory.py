"""LLM-written memory for novel faults: ask the model for a detector module and a playbook.

The model gets the incident as delimited, redacted data (findings, the fix's
edits, the implicated objects before and after, the diagnosis) plus the detector
SDK's contract and two write tools. Each tool checks what it is given at once
(the AST allowlist for the module, the schema for the playbook) and answers with
the problems, so the model can correct itself within the step budget; the full
guard runs afterwards in :mod:`.reflection`. Nothing the model writes is trusted:
it is data until the guard has passed it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gitmedic.bot.memory.ast_check import check_source
from gitmedic.bot.responder.llm import AgentResult, Budget, Completion, Tool, data_block, run_agent
from gitmedic.bot.responder.playbooks import PlaybookError, parse_playbook
from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.redact import redact_object

REFLECTION_BUDGET = Budget(max_steps=8, max_tokens=40_000, max_cost_usd=0.5)
TASK = """The incident below was fixed by the edits shown; the fix was merged, synced and
verified. Your task now is not to fix anything: write operational memory so that
the same fault class, on any object of any app, is detected and fixed next time
without you.

1. Call write_detector with a Python module for the gitmedic detector SDK:
   `from gitmedic.detectors import DetectorSpec, Scope, Severity`, a module-level
   `SPEC = DetectorSpec(id="learned-<kebab-case>", description=..., kinds=frozenset({...}),
   severity=Severity.WARNING, remediation=..., scope=Scope.BOTH, playbooks=("<playbook id>",))`
   and `def detect(snapshot)` yielding `SPEC.finding(obj.ref, summary, params={...})`.
   Snapshot API: snapshot.of_kind(kind), snapshot.get(kind, ns, name),
   snapshot.workloads() (each has .ref, .obj, .pod_spec, .containers()), obj.body,
   obj.spec, obj.name. Import nothing else except re, math, itertools, collections.
   It must fire on the pre-fix state and stay silent on the fixed and healthy states,
   and it must not mention this incident's object names: match the fault, not the object.
2. Call write_playbook with Markdown: YAML front matter (id, fault_class, title,
   detectors: [<detector id>], risk: low|medium|high, fix: {object: resource,
   paths: [field paths with {param} placeholders from your finding's params;
   {pod_spec} is the pod spec path of a workload]}) and the sections
   ## Decide, ## Triage, ## Localize, ## Verify, ## Mitigate.
3. Call submit_diagnosis with a one-line summary of the fault class."""


@dataclass
class Drafts:
    """What the model wrote through the tools, last call wins."""

    detector: str = ""
    playbook: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LlmMemory:
    detector: str
    playbook: str
    usage_tokens: int
    cost_usd: float
    stopped: str
    notes: tuple[str, ...]  # what the write tools refused, and why


def ask_for_memory(
    *,
    model: str,
    completion: Completion | None,
    findings: Sequence[Finding],
    edits: Sequence[Edit],
    implicated: Mapping[str, Mapping[str, Any]],
    diagnosis: str,
    budget: Budget = REFLECTION_BUDGET,
) -> LlmMemory:
    """Run the agent with the two write tools; ``implicated``: role -> object body."""
    drafts = Drafts()
    result: AgentResult = run_agent(
        model=model,
        incident=_incident(findings, edits, implicated, diagnosis),
        tools=_tools(drafts),
        budget=budget,
        completion=completion,
    )
    return LlmMemory(
        drafts.detector,
        drafts.playbook,
        result.usage.tokens,
        result.usage.cost_usd,
        result.stopped,
        tuple(drafts.notes),
    )


def _incident(
    findings: Sequence[Finding],
    edits: Sequence[Edit],
    implicated: Mapping[str, Mapping[str, Any]],
    diagnosis: str,
) -> str:
    blocks = [TASK]
    blocks.append(data_block("findings", json.dumps([f.to_json() for f in findings], indent=1)))
    blocks.append(data_block("fix-edits", json.dumps([e.to_json() for e in edits], indent=1)))
    for role, body in implicated.items():
        blocks.append(data_block(role, json.dumps(redact_object(body), indent=1)))
    blocks.append(data_block("diagnosis", diagnosis or "(none)"))
    return "\n\n".join(blocks)


def _tools(drafts: Drafts) -> list[Tool]:
    def write_detector(args: Mapping[str, Any]) -> str:
        source = str(args.get("source", ""))
        problems = check_source(source, "detector.py")
        if problems:
            drafts.notes.append("LLM detector refused: " + "; ".join(problems))
            return "refused: " + "; ".join(problems) + ". Fix and call write_detector again."
        drafts.detector = source
        return "recorded; it will be run against the pre-fix, fixed and healthy states"

    def write_playbook(args: Mapping[str, Any]) -> str:
        text = str(args.get("markdown", ""))
        try:
            parse_playbook(text, "playbook/README.md")
        except PlaybookError as exc:
            drafts.notes.append(f"LLM playbook refused: {exc}")
            return f"refused: {exc}. Fix and call write_playbook again."
        drafts.playbook = text
        return "recorded"

    return [
        Tool("write_detector", "Write the learned detector module.", _schema("source"),
             write_detector),
        Tool("write_playbook", "Write the playbook (Markdown with front matter).",
             _schema("markdown"), write_playbook),
    ]  # fmt: skip


def _schema(key: str) -> dict[str, Any]:
    return {"type": "object", "required": [key], "properties": {key: {"type": "string"}}}
