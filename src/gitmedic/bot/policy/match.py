"""Matching one policy rule against one change: globs, sets and UTC time windows.

Renovate's rule: every matcher a rule *gives* must match; a matcher left out
matches anything. A set matcher (strategies, detectors, playbooks, fields,
paths, namespaces) matches only when it covers *every* item of the change: a
rule that says "replica edits are low" must not vouch for a change that edits
replicas and an image. An empty item set never satisfies a given matcher (a
change that fixes no detector's finding is not "a change of detector X").

Globs are ours, not :mod:`fnmatch`: ``*`` stays inside one segment (between
``/`` in file paths, between ``.`` in field paths), ``**`` crosses segments,
``?`` is one character of a segment, and ``[``/``]`` are literal so that field
paths like ``spec.ports[*].targetPort`` read as written.

Windows are ``<day>[-<day>] HH:MM-HH:MM`` in UTC; an end before the start runs
past midnight into the next day (``fri 22:00-02:00`` covers Saturday 01:00).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Protocol

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WINDOW = re.compile(
    r"^(?P<d1>[a-z]{3})(?:-(?P<d2>[a-z]{3}))? (?P<t1>\d\d:\d\d)-(?P<t2>\d\d:\d\d)$"
)


class PolicyError(ValueError):
    """A rule that cannot be evaluated (e.g. a malformed window); names the rule."""


class RuleLike(Protocol):
    @property
    def strategies(self) -> tuple[str, ...]: ...
    @property
    def detectors(self) -> tuple[str, ...]: ...
    @property
    def playbooks(self) -> tuple[str, ...]: ...
    @property
    def fields(self) -> tuple[str, ...]: ...
    @property
    def paths(self) -> tuple[str, ...]: ...
    @property
    def namespaces(self) -> tuple[str, ...]: ...
    @property
    def max_changed_lines(self) -> int | None: ...
    @property
    def windows(self) -> tuple[str, ...]: ...


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str, separator: str) -> re.Pattern[str]:
    sep = re.escape(separator)
    out = []
    for token in re.split(r"(\*\*|\*|\?)", pattern):
        if token == "**":
            out.append(".*")
        elif token == "*":
            out.append(f"[^{sep}]*")
        elif token == "?":
            out.append(f"[^{sep}]")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out))


def glob_match(pattern: str, value: str, separator: str) -> bool:
    return _glob_regex(pattern, separator).fullmatch(value) is not None


def field_matches(patterns: Iterable[str], field_path: str) -> bool:
    return any(glob_match(p, field_path, ".") for p in patterns)


def path_matches(patterns: Iterable[str], path: str) -> bool:
    return any(glob_match(p, path, "/") for p in patterns)


def covers(items: Iterable[str], allowed: tuple[str, ...]) -> bool:
    """Every item is in ``allowed``, and there is at least one item."""
    given = tuple(items)
    return bool(given) and all(item in allowed for item in given)


def covers_glob(items: Iterable[str], patterns: tuple[str, ...], separator: str) -> bool:
    given = tuple(items)
    return bool(given) and all(
        any(glob_match(p, item, separator) for p in patterns) for item in given
    )


def in_window(window: str, now: datetime) -> bool:
    """Whether UTC time ``now`` falls in ``window`` (see the module doc)."""
    match = _WINDOW.match(window.strip().lower())
    if match is None or match["d1"] not in DAYS or (match["d2"] or match["d1"]) not in DAYS:
        raise PolicyError(f"window {window!r} is not '<day>[-<day>] HH:MM-HH:MM'")
    start, end = _minutes(match["t1"], window), _minutes(match["t2"], window)
    days = _day_range(DAYS.index(match["d1"]), DAYS.index(match["d2"] or match["d1"]))
    minute = now.hour * 60 + now.minute
    if start <= end:
        return now.weekday() in days and start <= minute < end
    # Past midnight: the part before midnight belongs to today, the rest to yesterday.
    yesterday = (now - timedelta(days=1)).weekday()
    return (now.weekday() in days and minute >= start) or (yesterday in days and minute < end)


def _minutes(text: str, window: str) -> int:
    hours, minutes = int(text[:2]), int(text[3:])
    if hours > 24 or minutes > 59 or (hours == 24 and minutes):
        raise PolicyError(f"window {window!r}: {text} is not a time of day")
    return hours * 60 + minutes


def _day_range(first: int, last: int) -> frozenset[int]:
    """Days from ``first`` to ``last`` inclusive, wrapping (``sat-mon`` is sat, sun, mon)."""
    span = (last - first) % 7
    return frozenset((first + i) % 7 for i in range(span + 1))


def specificity(rule: RuleLike) -> int:
    """How many matchers a rule gives: the most specific matching rule wins."""
    given = (
        rule.strategies,
        rule.detectors,
        rule.playbooks,
        rule.fields,
        rule.paths,
        rule.namespaces,
        rule.windows,
    )
    return sum(1 for g in given if g) + (rule.max_changed_lines is not None)
