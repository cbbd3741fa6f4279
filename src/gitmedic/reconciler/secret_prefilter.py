"""Which texts no detect-secrets plugin can match, decided without loading the library.

Loading the plugins imports ``requests`` and most of detect-secrets: about 0.1 s of a
CLI run, more than scanning 10,000 objects' values takes. Every plugin of
:data:`gitmedic.reconciler.secret_scan.PLUGINS` yields only what one of its
``denylist`` regexes matches, and each regex can match only a text at least as long
as its shortest match that holds one of a few literal strings (``eyJ`` for a JWT,
``://`` for basic auth, ``AKIA`` ... for AWS). :data:`NEEDS` is that condition per
regex, derived by :func:`requirement` from the regex's parse tree, so a text that
meets none of them is one every plugin passes over: skipping it is exact, not a guess.

The table was derived from one version of the library; :data:`SOURCES` is the digest
of the plugin sources it was derived from. When the installed sources differ (another
version), :func:`may_hold` answers True for every text: the plugins then load and scan
as before, slower but never blind. ``tests/security/test_secret_prefilter.py`` derives
the table again from the installed plugins and fails when it or the digest is stale.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from functools import cache
from pathlib import Path
from typing import Any

# (shortest match, literal strings one of which every match holds, ignore case) for each
# denylist regex of each plugin in secret_scan.PLUGINS, in that order.
NEEDS: tuple[tuple[int, tuple[str, ...], bool], ...] = (
    (13, ("AKC",), False),
    (16, ("artif", "buildkit", "jfrog"), True),
    (20, ("3T", "BIA", "CCA", "KIA", "SIA"), False),
    (45, ("aws",), True),
    (88, ("==",), False),
    (7, ("://",), False),
    (59, (".",), False),
    (40, ("gh",), False),
    (6, ("eyJ",), False),
    (36, ("-us",), False),
    (40, ("TOKEN", "_authToken", "npm_"), False),
    (27, ("PRIVATE KEY",), False),
    (34, ("PuTTY-User-Key-File-2:",), False),
    (69, ("SG.",), False),
    (8, ("xox",), True),
    (40, ("https://hooks.slack.com/services/T",), True),
    (50, ("sq0csp-",), False),
    (32, ("k_live_",), False),
    (34, ("AC",), False),
    (34, ("SK",), False),
)
# sha256 of the plugin modules and plugins/base.py (their analyze_string) NEEDS is for.
SOURCES = "506d5fe81902c9a1088a2b16466d62f7fc67f38878cfc1b90937286cacd2b6cb"


def may_hold(text: str) -> bool:
    """False when no plugin regex can match ``text`` (so none need load to scan it)."""
    checks = _checks()
    if checks is None:
        return True
    size = len(text)
    return any(size >= shortest and needle.search(text) for shortest, needle in checks)


@cache
def _checks() -> tuple[tuple[int, re.Pattern[str]], ...] | None:
    if installed_sources() != SOURCES:
        return None
    return tuple(
        (shortest, re.compile("|".join(map(re.escape, needles)), re.IGNORECASE if fold else 0))
        for shortest, needles, fold in NEEDS
    )


def installed_sources() -> str | None:
    """The digest of the installed plugin sources (None: not readable as files)."""
    from gitmedic.reconciler.secret_scan import MODULE, PLUGINS

    try:
        spec = importlib.util.find_spec(MODULE)  # a top-level package: found, not imported
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations))) / "plugins"
        digest = hashlib.sha256()
        for module in ("base", *(entry.split(":")[0] for entry in PLUGINS)):
            digest.update((folder / f"{module}.py").read_bytes())
    except (ImportError, ValueError, OSError):
        return None
    return digest.hexdigest()


def requirement(pattern: re.Pattern[str]) -> tuple[int, tuple[str, ...], bool]:
    """What every match of ``pattern`` has: its shortest length, and literal strings one of
    which it holds (compared ignoring case when the regex ignores it there). Read from the
    parse tree: a run of literal characters, a group, an alternation whose every branch has
    one, or a repeat done at least once; of those, the one whose shortest string is longest."""
    from re import _parser  # type: ignore[attr-defined]

    tree = _parser.parse(pattern.pattern, pattern.flags)
    shortest = tree.getwidth()[0]
    found = _needles(list(tree), bool(pattern.flags & re.IGNORECASE))
    return (shortest, *(found or ((), False)))


def _needles(items: list[tuple[Any, Any]], fold: bool) -> tuple[tuple[str, ...], bool] | None:
    from re import _constants as c  # type: ignore[attr-defined]

    candidates: list[tuple[tuple[str, ...], bool]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            candidates.append((("".join(run),), fold))
            run.clear()

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        close_run()
        found = None
        if op is c.SUBPATTERN:
            _, add, remove, sub = av
            inner = (fold or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            found = _needles(list(sub), inner)
        elif op is c.BRANCH:
            branches = [_needles(list(b), fold) for b in av[1]]
            if branches and all(branches):
                alternatives = sorted({n for b in branches if b for n in b[0]})
                found = (tuple(alternatives), any(b[1] for b in branches if b))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:  # done at least once
            found = _needles(list(av[2]), fold)
        if found:
            candidates.append(found)
    close_run()
    return max(candidates, key=lambda c: min(map(len, c[0])), default=None)
