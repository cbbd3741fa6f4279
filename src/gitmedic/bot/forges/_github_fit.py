"""Texts that fit GitHub's limit: 65,536 characters per PR body, issue body or comment.

GitHub refuses a longer text with 422, so a large incident's findings table would
open no PR at all. A text over the limit keeps its beginning and its last sections
(from a Markdown heading on: in a PR body, the plan and the controls people tick)
and loses the middle, cut at line boundaries; the middle goes, in order, into
continuation comments on the same PR or issue (topic ``<topic>/part-<i>``, each
within the limit too), and a note where it was cut links to the first of them.
Nothing is lost: the full text is the beginning, the parts, then the end.

The bot's hidden markers stay at the end of a cut body, untouched: the body hash
is that of the full rendering, so :func:`~gitmedic.reconciler.forge_markers.needs_body_update`
still compares what the bot means to say, not what fitted. Lengths are counted in
UTF-16 code units, never fewer than characters, so no count of GitHub's can exceed ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.forges._github_api import ApiUser
from gitmedic.reconciler import forge_markers as markers

LIMIT = 65_536
BODY_TOPIC = "description"  # the parts of a cut PR or issue body
_ROOM = 400  # kept free for the note or a part's header
CUT = "<!-- gitmedic:cut -->"
UNLINKED = "<!-- gitmedic:cut unlinked -->"  # cut, but its parts are not posted yet
_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)


def github_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class Split:
    head: str  # the beginning, kept
    end: str  # the last sections, kept
    markers: str  # the bot's hidden markers, kept at the very end
    rest: tuple[str, ...]  # the middle that was cut, in parts that each fit a comment

    def text(self, link: str | None) -> str:
        """The cut text with its note (``link``: the first part's URL, once posted)."""
        if not self.rest:
            return self.head + self.end + self.markers
        count = len(self.rest)
        where = f"[{count} comment{'s' if count > 1 else ''} below]({link})" if link else None
        note = (
            f"\n\n---\n_Cut here to fit GitHub's limit of {LIMIT:,} characters; the cut "
            f"text continues in {where or 'the comments below'}._\n{CUT if link else UNLINKED}"
            "\n\n---\n\n"
        )
        return self.head.rstrip("\n") + note + self.end + self.markers


def split(text: str) -> Split:
    """``text`` cut to fit, with its middle in parts; nothing cut when it fits."""
    shown = markers.strip_markers(text)
    hidden = text[len(shown) :] if text.startswith(shown) else ""
    shown = text[: len(text) - len(hidden)]
    if github_length(text) <= LIMIT:
        return Split(shown, "", hidden, ())
    budget = LIMIT - github_length(hidden) - _ROOM
    start = _last_sections(shown, budget // 4)
    end = shown[start:]
    cut = _fitting(shown[:start], budget - github_length(end))
    rest, parts = shown[cut:start], []
    while rest:
        size = _fitting(rest, LIMIT - _ROOM)
        parts.append(rest[:size])
        rest = rest[size:]
    return Split(shown[:cut], end, hidden, tuple(parts))


def _last_sections(text: str, budget: int) -> int:
    """Where the longest run of whole last sections within ``budget`` starts."""
    start = len(text)
    for heading in _HEADING.finditer(text):
        if github_length(text[heading.start() :]) <= budget:
            return heading.start()
    return start


def was_cut(stored: str) -> bool:
    return CUT in stored or UNLINKED in stored


def unlinked(stored: str) -> bool:
    return UNLINKED in stored


def part_topic(topic: str, index: int) -> str:
    return f"{topic[:88]}/part-{index}"


def _fitting(text: str, budget: int) -> int:
    """How many leading characters of ``text`` fit ``budget`` (ending at a newline if near)."""
    end = min(len(text), budget)
    while github_length(text[:end]) > budget:
        end -= github_length(text[:end]) - budget
    if end == len(text):
        return end
    newline = text.rfind("\n", 0, end)
    return newline + 1 if newline >= end // 2 else end


class Fitting(ApiUser):
    """Posts the parts of a cut text as comments; the text that then goes in place."""

    def fitted(self, number: int, text: str, topic: str, stored: str = "") -> str:
        """``text`` as it fits on #``number``: its parts posted (stale ones deleted)."""
        cut = split(text)
        if not cut.rest and not was_cut(stored):
            return text
        link = self._post_parts(number, topic, cut.rest)
        return cut.text(link)

    def _post_parts(self, number: int, topic: str, parts: tuple[str, ...]) -> str | None:
        mine = self._parts_of(number, topic)
        first: str | None = None
        for index, part in enumerate(parts, start=1):
            name = part_topic(topic, index)
            header = f"_(continued: part {index} of {len(parts)})_\n\n"
            body = markers.topic_body(name, header + part)
            raw = mine.pop(name, None)
            if raw is None:
                raw = self.request("POST", f"/issues/{number}/comments", body={"body": body})
            elif raw.get("body") != body:
                raw = self.request("PATCH", f"/issues/comments/{raw['id']}", body={"body": body})
            first = first or str(raw["html_url"])
        for stale in mine.values():  # the text shrank: its old parts would mislead
            self.request("DELETE", f"/issues/comments/{stale['id']}")
        return first

    def _parts_of(self, number: int, topic: str) -> dict[str, dict[str, Any]]:
        prefix = f"{topic[:88]}/part-"
        found: dict[str, dict[str, Any]] = {}
        for raw in self.pages(f"/issues/{number}/comments"):
            name = markers.extract_topic(str(raw.get("body") or ""))
            if (
                (raw.get("user") or {}).get("login") == self.bot
                and name
                and name.startswith(prefix)
            ):
                found[name] = raw
        return found
