"""A proposal: what the responder would change for an incident, why, and what it cost.

The transaction opens a pull request from it and the PR body renders it, so it
holds everything a reviewer needs and nothing secret: ``evidence`` is the
findings' JSON (already masked by the detectors) passed through redaction once
more, and ``diagnosis`` is redacted where it is built.

``strategy`` says how the edits were found, cheapest first: ``playbook`` (a
routed playbook's fields restored from history), ``bisect`` (the commit that
introduced the finding, and only the fields of it that matter), ``lever`` (a
runtime mitigation for a fault no commit caused: a limit raised, a restart
annotation, :mod:`.levers`), ``llm`` (the model's edits, validated), or
``escalate``: nothing in desired state explains the incident and no lever
applies, so there are no edits and ``escalation`` says why, with the evidence,
for an issue or comment, never a fix PR.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gitmedic.detectors.finding import Finding
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.redact import redact_object, redact_text

Strategy = Literal["playbook", "bisect", "lever", "llm", "escalate"]
# The order of cost (and of risk): a proposal that combines strategies is named by its
# costliest, so a fix with a runtime lever in it is a ``lever`` fix for the policy.
STRATEGY_COST: Mapping[str, int] = {
    "playbook": 0,
    "bisect": 1,
    "lever": 2,
    "llm": 3,
    "escalate": 4,
}


@dataclass(frozen=True)
class IntroducingCommit:
    sha: str
    author: str
    subject: str

    @classmethod
    def of(cls, commit: Commit) -> IntroducingCommit:
        return cls(commit.sha, commit.author, redact_text(commit.subject))

    def to_json(self) -> dict[str, str]:
        return {"sha": self.sha, "author": self.author, "subject": self.subject}


@dataclass(frozen=True)
class Escalation:
    """Why no fix is proposed (a runtime-only fault), with the evidence for a person."""

    reason: str
    evidence: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "evidence": [dict(e) for e in self.evidence]}


@dataclass(frozen=True)
class Proposal:
    incident: str
    strategy: Strategy
    edits: tuple[Edit, ...] = ()
    diagnosis: str = ""
    evidence: tuple[Mapping[str, Any], ...] = ()
    playbook: str | None = None
    commit: IntroducingCommit | None = None
    fields: tuple[str, ...] = ()  # "file: Kind/ns/name path" of every field touched
    tokens: int = 0
    cost_usd: float = 0.0
    escalation: Escalation | None = None
    rejected: tuple[str, ...] = ()  # edits dropped (LLM), each with its reason
    commits_walked: int = 0
    # Other values the evidence allows for a fault with no history: a person chooses.
    alternatives: tuple[str, ...] = ()

    @property
    def is_fix(self) -> bool:
        return bool(self.edits) and self.escalation is None

    def to_json(self) -> dict[str, Any]:
        return {
            "incident": self.incident,
            "strategy": self.strategy,
            "edits": [e.to_json() for e in self.edits],
            "diagnosis": self.diagnosis,
            "evidence": [dict(e) for e in self.evidence],
            "playbook": self.playbook,
            "commit": self.commit.to_json() if self.commit else None,
            "fields": list(self.fields),
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "escalation": self.escalation.to_json() if self.escalation else None,
            "rejected": list(self.rejected),
            "commits_walked": self.commits_walked,
            "alternatives": list(self.alternatives),
        }


def evidence_of(findings: Iterable[Finding]) -> tuple[Mapping[str, Any], ...]:
    """The findings' JSON, redacted (params are masked by detectors; prose may not be)."""
    return tuple(redact_object(f.to_json()) for f in findings)


def hand_over(proposal: Proposal, why: str) -> Proposal:
    """An escalation to a person when the attempts found nothing new to deploy."""
    reason = f"{why}; a person has to decide. Last diagnosis: {proposal.diagnosis}"
    return Proposal(
        proposal.incident,
        "escalate",
        diagnosis=reason,
        evidence=proposal.evidence,
        escalation=Escalation(reason, proposal.evidence),
    )
