"""Evidence for revert, retry and escalation bodies: findings as a short table, long
evidence folded into ``<details>``, everything escaped and bounded.

Findings arrive as JSON (a plan's proposal, a transaction's journal) and their
text is cluster or repository text, so every cell goes through
:func:`~gitmedic.bot.render.markdown.cell`. A body
lists at most ``limit`` of them and says how many it left out: a fault that
makes 200 findings must still produce a body the forge accepts (GitHub refuses
more than 65,536 characters).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gitmedic.bot.render import markdown
from gitmedic.bot.render.untrusted import untrusted
from gitmedic.reconciler.redact import redact_text

MAX_CELL = 200  # characters of one cell; the journal keeps the whole text
FENCE = "~~~~~~~~"  # a fence no evidence line is allowed to close (see ``details``)


def line(text: object) -> str:
    """``text`` as one inert line of prose: a line break in it could start a fence or a
    heading of its own (a fence opened by cluster text swallows the rest of the body)."""
    return untrusted(" ".join(redact_text(str(text)).split()))


def cell(text: object) -> str:
    """``text`` redacted, bounded and inert in one table cell (or one list item)."""
    return markdown.cell(redact_text(str(text)), limit=MAX_CELL)


def finding_table(findings: Sequence[Mapping[str, Any]], limit: int) -> str:
    """Severity, detector, resource and summary of each finding, ``limit`` at most."""
    if not findings:
        return "_none_"
    rows = [
        "| {} | {} | {} | {} |".format(
            cell(f.get("severity", "?")),
            cell(f"{f.get('detector', '?')} / {f.get('rule', '?')}"),
            cell(_resource(f.get("resource"))),
            cell(f.get("summary", "")),
        )
        for f in findings[:limit]
    ]
    table = "| Severity | Detector | Resource | Summary |\n|---|---|---|---|\n" + "\n".join(rows)
    return table + _left_out(len(findings) - limit, "finding")


def bullet_list(lines: Sequence[str], limit: int) -> str:
    if not lines:
        return "_none_"
    shown = "\n".join(f"- {cell(line)}" for line in lines[:limit])
    return shown + _left_out(len(lines) - limit, "line")


def details(summary: str, content: str) -> str:
    """``content`` folded under ``summary``: GitHub shows the summary, a click the rest.

    ``content`` is shown as a fenced block, so nothing in it renders; the fence is one
    no line of it can close (each line that starts with ``~`` is indented by a space), and
    no ``<!--`` in it can be read back as one of gitmedic's hidden markers."""
    lines = (" " + ln if ln.lstrip().startswith("~") else ln for ln in content.splitlines())
    safe = "\n".join(lines).replace("<!--", "<\u2060!--")
    return (
        f"<details><summary>{untrusted(summary)}</summary>\n\n"
        f"{FENCE}\n{redact_text(safe)}\n{FENCE}\n\n</details>"
    )


def evidence_json(items: Sequence[Mapping[str, Any]], limit: int) -> str:
    """The first ``limit`` items as indented JSON (what a person copies into a tool)."""
    shown = json.dumps([dict(i) for i in items[:limit]], indent=1, sort_keys=True, default=str)
    left = len(items) - limit
    return shown + (f"\n// {left} more not shown" if left > 0 else "")


def _resource(res: object) -> str:
    if not isinstance(res, Mapping):
        return str(res or "?")
    ns = f"{res.get('namespace')}/" if res.get("namespace") else ""
    return f"{res.get('kind', '?')} {ns}{res.get('name', '?')}"


def _left_out(count: int, what: str) -> str:
    return (
        f"\n\n_…and {count} more {what}{'s' if count != 1 else ''} not shown._" if count > 0 else ""
    )
