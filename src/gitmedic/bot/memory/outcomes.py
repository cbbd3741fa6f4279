"""The outcomes log: one JSON line per incident in ``.gitmedic/outcomes.jsonl``, append-only.

The log is the memory's ledger: which detectors fired, which playbooks were
surfaced and which one was applied, which strategy produced the change, what it
cost, and how the transaction ended. The dashboard reads it; nothing ever
rewrites it. Appending is therefore a pure function from the file's current text
to its new text, and the guard checks (against the base revision of a memory PR)
that the old text is a prefix of the new one.

Records hold identifiers, counts and timestamps only, never object bodies or
values, so nothing sensitive can reach the log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmedic.bot.memory.guard import MEMORY, OUTCOME_KEYS
from gitmedic.reconciler import repofs

OUTCOMES_PATH = f"{MEMORY}/outcomes.jsonl"
STRATEGIES = frozenset({"playbook", "bisect", "lever", "llm", "revert", "none"})
STATUSES = frozenset({"committed", "reverted", "rejected", "held", "failed"})


class OutcomeError(ValueError):
    """A record that may not go into the log; the message says which field and why."""


@dataclass(frozen=True)
class OutcomeRecord:
    id: str
    commits: tuple[str, ...]
    detectors: tuple[str, ...]  # detectors whose findings made up the incident
    playbooks: tuple[str, ...]  # playbooks surfaced to the responder (routed to)
    strategy: str
    classification: str  # the fault class, as diagnosed
    tokens: int
    cost_usd: float
    opened_at: str
    closed_at: str
    status: str = "committed"
    playbooks_applied: tuple[str, ...] = ()  # playbooks whose fix recipe made the change
    app: str = ""
    memory: tuple[str, ...] = field(default=())  # memory written: detector and playbook ids

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise OutcomeError(f"outcome {self.id!r}: " + "; ".join(problems))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "app": self.app,
            "commits": list(self.commits),
            "detectors": sorted(set(self.detectors)),
            "playbooks": sorted(set(self.playbooks)),
            "playbooks_applied": sorted(set(self.playbooks_applied)),
            "strategy": self.strategy,
            "status": self.status,
            "classification": self.classification,
            "tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 6),
            "opened_at": self.opened_at,
            "closed_at": self.closed_at,
            "memory": sorted(set(self.memory)),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OutcomeRecord:
        missing = sorted(OUTCOME_KEYS - set(data))
        if missing:
            raise OutcomeError(f"outcome record lacks {', '.join(missing)}")
        return cls(
            id=str(data["id"]),
            app=str(data.get("app", "")),
            commits=tuple(map(str, data["commits"])),
            detectors=tuple(map(str, data["detectors"])),
            playbooks=tuple(map(str, data["playbooks"])),
            playbooks_applied=tuple(map(str, data.get("playbooks_applied", ()))),
            strategy=str(data["strategy"]),
            status=str(data.get("status", "committed")),
            classification=str(data["classification"]),
            tokens=int(data["tokens"]),
            cost_usd=float(data["cost_usd"]),
            opened_at=str(data["opened_at"]),
            closed_at=str(data["closed_at"]),
            memory=tuple(map(str, data.get("memory", ()))),
        )


def _problems(record: OutcomeRecord) -> list[str]:
    problems = []
    if not record.id:
        problems.append("id is empty")
    if record.strategy not in STRATEGIES:
        problems.append(f"strategy {record.strategy!r} is not one of {sorted(STRATEGIES)}")
    if record.status not in STATUSES:
        problems.append(f"status {record.status!r} is not one of {sorted(STATUSES)}")
    if record.tokens < 0 or record.cost_usd < 0:
        problems.append("tokens and cost_usd must not be negative")
    if not set(record.playbooks_applied) <= set(record.playbooks):
        problems.append("playbooks_applied must be among the playbooks surfaced")
    if record.closed_at and record.closed_at < record.opened_at:
        problems.append("closed_at is before opened_at")
    return problems


def appended(current: str, record: OutcomeRecord) -> str:
    """The log's text with ``record`` appended; the old text stays a byte-for-byte prefix.

    Refuses a record whose id is already in the log: one record per incident.
    """
    if record.id in {r.id for r in parse_outcomes(current)}:
        raise OutcomeError(f"outcome {record.id!r} is already in {OUTCOMES_PATH}")
    prefix = current if not current or current.endswith("\n") else current + "\n"
    line = json.dumps(record.to_json(), sort_keys=True, separators=(",", ":"))
    return prefix + line + "\n"


def parse_outcomes(text: str) -> list[OutcomeRecord]:
    """Every record of a log's text, in order; a bad line raises naming its number."""
    return list(_records(text))


def _records(text: str) -> Iterator[OutcomeRecord]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise OutcomeError("a record is a JSON object")
            yield OutcomeRecord.from_json(data)
        except (ValueError, TypeError, KeyError) as exc:
            raise OutcomeError(f"{OUTCOMES_PATH} line {number}: {exc}") from None


def read_outcomes(repo: Path) -> list[OutcomeRecord]:
    current = _current(repo)
    return parse_outcomes(current) if current is not None else []


def outcome_change(repo: Path, record: OutcomeRecord) -> dict[str, str]:
    """The memory change that appends ``record``: ``{path: new content}``."""
    return {OUTCOMES_PATH: appended(_current(repo) or "", record)}


def _current(repo: Path) -> str | None:
    """The log's text (None when there is none yet); never read through a link."""
    try:
        return repofs.read_text(repo, OUTCOMES_PATH)
    except repofs.LinkRefused as exc:
        raise OutcomeError(str(exc)) from None
    except FileNotFoundError:
        return None
