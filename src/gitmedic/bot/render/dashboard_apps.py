"""One dashboard issue for every app of a repository, kept under GitHub's body limit.

Renovate keeps one Dependency Dashboard per repository; gitmedic does the same
for the apps of one repository: one issue, a section per app, so no app's
transactions or boxes hide another's. GitHub refuses a body over 65,536
characters, and a repository of many apps with long histories could reach it,
so :func:`fit_sections` gives up detail in this order, always saying what it
left out:

1. every app's full section (its boxes, then its tables);
2. every app's short section: its summary and boxes, the tables left out;
3. the short sections of the first apps that fit, the rest named in a note
   (their boxes are not on the issue, so nothing of theirs can be ticked);
4. the first app's short section cut at a line (a box is one line, so no box
   is half rendered).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitmedic.bot.render.untrusted import untrusted

MAX_BODY = 60_000  # GitHub's limit is 65,536: the rest is for the forge's hidden markers
NAMED = 20  # apps named in the note of those left out; the rest counted


@dataclass(frozen=True)
class AppSection:
    app: str
    full: str  # boxes and tables
    short: str  # summary and boxes only


def fit_sections(head: str, sections: Sequence[AppSection], limit: int = MAX_BODY) -> str:
    """``head`` then the sections, as much of them as fits in ``limit`` characters."""
    body = _join(head, [s.full for s in sections])
    if len(body) <= limit:
        return body
    body = _join(head, [s.short for s in sections])
    if len(body) <= limit:
        return body
    kept = len(sections)
    while kept > 1:
        kept -= 1
        body = _join(head, [s.short for s in sections[:kept]], _left_out(sections[kept:]))
        if len(body) <= limit:
            return body
    note = _left_out(sections[1:]) if len(sections) > 1 else ""
    cut = "\n\n_(this section is cut to fit GitHub's size limit)_"
    room = limit - len(_join(head, [""], note)) - len(cut)
    first = sections[0].short[: max(room, 0)]
    first = first[: first.rfind("\n")] if "\n" in first else ""
    return _join(head, [first + cut], note)


def _join(head: str, parts: Sequence[str], note: str = "") -> str:
    tail = [note] if note else []
    return "\n\n".join([head.rstrip("\n"), *(p.rstrip("\n") for p in parts), *tail]) + "\n"


def _left_out(sections: Sequence[AppSection]) -> str:
    names = ", ".join(f"`{untrusted(s.app)}`" for s in sections[:NAMED])
    more = f" and {len(sections) - NAMED} more" if len(sections) > NAMED else ""
    return (
        f"_Left out to fit GitHub's size limit: {len(sections)} app(s), {names}{more}. "
        "Their PRs and escalation issues carry the details._"
    )
