"""Refinement signals from the outcomes log: memory that is not pulling its weight (SDO).

Two kinds of memory deserve a person's look, and the dashboard shows them:

- a **detector that fires without its playbook ever helping**: it took part in
  several incidents, and in none of them did a playbook's fix recipe produce the
  change that was kept (strategy ``playbook``, status ``committed``). Either the
  detector is noisy or its playbook's recipe is wrong;
- a **playbook reached only by the LLM**: it was surfaced in incidents, but every
  one of them was resolved (or not) by the LLM strategy, never by the playbook's
  own recipe. Its recipe does not bind, or it routes from the wrong detectors;
  either way each occurrence still costs tokens.

Signals are computed, never stored: the log is the only state.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from gitmedic.bot.memory.outcomes import OutcomeRecord

DETECTOR_UNHELPED = "detector-unhelped"
PLAYBOOK_LLM_ONLY = "playbook-llm-only"
MIN_INCIDENTS = 2


@dataclass(frozen=True)
class Signal:
    kind: str  # DETECTOR_UNHELPED | PLAYBOOK_LLM_ONLY
    subject: str  # the detector or playbook id
    incidents: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "incidents": list(self.incidents),
            "reason": self.reason,
        }


def refinement_signals(
    records: Iterable[OutcomeRecord], *, min_incidents: int = MIN_INCIDENTS
) -> list[Signal]:
    """Signals sorted by (kind, subject); a subject needs ``min_incidents`` to be judged."""
    records = list(records)
    out = _unhelped_detectors(records, min_incidents) + _llm_only_playbooks(records, min_incidents)
    return sorted(out, key=lambda s: (s.kind, s.subject))


def _helped(record: OutcomeRecord) -> bool:
    return (
        record.strategy == "playbook"
        and record.status == "committed"
        and bool(record.playbooks_applied)
    )


def _unhelped_detectors(records: list[OutcomeRecord], minimum: int) -> list[Signal]:
    seen: dict[str, list[OutcomeRecord]] = defaultdict(list)
    for record in records:
        for detector in set(record.detectors):
            seen[detector].append(record)
    out = []
    for detector, fired in seen.items():
        if len(fired) < minimum or any(_helped(r) for r in fired):
            continue
        strategies = ", ".join(sorted({r.strategy for r in fired}))
        out.append(
            Signal(
                DETECTOR_UNHELPED,
                detector,
                tuple(r.id for r in fired),
                f"fired in {len(fired)} incidents and no playbook's fix was kept in any "
                f"(resolved by: {strategies})",
            )
        )
    return out


def _llm_only_playbooks(records: list[OutcomeRecord], minimum: int) -> list[Signal]:
    reached: dict[str, list[OutcomeRecord]] = defaultdict(list)
    for record in records:
        for playbook in set(record.playbooks):
            reached[playbook].append(record)
    out = []
    for playbook, used in reached.items():
        if len(used) < minimum or any(r.strategy != "llm" for r in used):
            continue
        tokens = sum(r.tokens for r in used)
        out.append(
            Signal(
                PLAYBOOK_LLM_ONLY,
                playbook,
                tuple(r.id for r in used),
                f"surfaced in {len(used)} incidents, every one handled by the LLM "
                f"({tokens} tokens); its fix recipe never applied",
            )
        )
    return out


def render_signals(signals: Iterable[Signal]) -> str:
    """Markdown lines for the dashboard issue (empty text: nothing to review)."""
    lines = [
        f"- [ ] `{s.subject}` ({s.kind}): {s.reason}; incidents {', '.join(s.incidents)}"
        for s in signals
    ]
    return "\n".join(lines) + ("\n" if lines else "")
