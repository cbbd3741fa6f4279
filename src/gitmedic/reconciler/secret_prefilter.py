"""Which texts no detect-secrets plugin can match, decided without loading the library.

Loading the plugins imports ``requests`` and most of detect-secrets: about 0.1 s of a
CLI run, more than scanning 10,000 objects' values takes. Every plugin of
:data:`PLUGINS` yields only what one of its
``denylist`` regexes matches, and each regex can match only a text at least as long as
its shortest match that holds every piece a match must have: its runs of literal
characters (``eyJ`` for a JWT, ``://``, ``:`` and ``@`` for basic auth), its repeated
character classes as runs (32 of ``[a-z0-9]`` after Twilio's ``AC``), one of an
alternation's branches. :data:`NEEDS` is that condition per regex, derived by
:func:`requirement` from the regex's parse tree, so a text that meets none of them is
one every plugin passes over: skipping it is exact, not a guess.

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

# module:class of each detect-secrets plugin used; an entry that no longer exists
# upstream is an ImportError at the first scan (loud), never a silently smaller set.
PLUGINS: tuple[str, ...] = (
    "artifactory:ArtifactoryDetector",
    "aws:AWSKeyDetector",
    "azure_storage_key:AzureStorageKeyDetector",
    "basic_auth:BasicAuthDetector",
    "discord:DiscordBotTokenDetector",
    "github_token:GitHubTokenDetector",
    "jwt:JwtTokenDetector",
    "mailchimp:MailchimpDetector",
    "npm:NpmDetector",
    "private_key:PrivateKeyDetector",
    "sendgrid:SendGridDetector",
    "slack:SlackDetector",
    "square_oauth:SquareOAuthDetector",
    "stripe:StripeDetector",
    "twilio:TwilioKeyDetector",
)
MODULE = "detect_secrets"

# (shortest match, regexes that each find something in every match) for each denylist
# regex of each plugin in PLUGINS, in that order (see requirement).
NEEDS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (13, ("(?:AKC)", "(?:[a-zA-Z0-9]{10})")),
    (16, ("(?:(?i:artif)|(?i:buildkit)|(?i:jfrog))", "(?:AP)", "(?:[a-zA-Z0-9]{8})")),
    (20, ("(?:A)", "(?:(?:3T)|(?:BIA)|(?:CCA)|(?:KIA)|(?:SIA))", "(?:[0-9A-Z]{16})")),
    (
        45,
        (
            "(?i:aws)",
            "(?:(?i:key)|(?i:pass)|(?i:password)|(?i:pw)|(?i:pwd)|(?i:token))",
            "(?i:[0-9a-zA-Z/\\+]{40})",
        ),
    ),
    (88, ("(?:[A-Za-z0-9\\+/]{86})", "(?:==)")),
    (7, ("(?:://)", "(?::)", "(?:@)")),
    (
        59,
        ("(?:[a-zA-Z\\d_\\-]{23})", "(?:\\.)", "(?:[a-zA-Z\\d_\\-]{6})", "(?:[a-zA-Z\\d_\\-]{27})"),
    ),
    (40, ("(?:gh)", "(?:_)", "(?:[A-Za-z0-9_]{36})")),
    (6, ("(?:eyJ)", "(?:\\.)")),
    (36, ("(?:[0-9a-z]{32})", "(?:\\-us)")),
    (40, ("(?:(?:(?:TOKEN)|(?:_authToken))|(?:[A-Za-z0-9\\-]{36}))",)),
    (27, ("(?:BEGIN\\ )", "(?:PRIVATE\\ KEY)", "(?:[A-Za-z0-9\\+/\\\\\\\n]{10})")),
    (34, ("(?:PuTTY\\-User\\-Key\\-File\\-2:)", "(?:Encryption:)")),
    (69, ("(?:SG\\.)", "(?:[a-zA-Z0-9_\\-]{22})", "(?:\\.)", "(?:[a-zA-Z0-9_\\-]{43})")),
    (8, ("(?i:xox)", "(?i:\\-)")),
    (40, ("(?i:https://hooks\\.slack\\.com/services/T)", "(?i:/B)", "(?i:/)")),
    (50, ("(?:sq0csp\\-)", "(?:[0-9A-Za-z\\\\\\-_]{43})")),
    (32, ("(?:k_live_)", "(?:[0-9a-zA-Z]{24})")),
    (34, ("(?:AC)", "(?:[a-z0-9]{32})")),
    (34, ("(?:SK)", "(?:[a-z0-9]{32})")),
)
# sha256 of the plugin modules and plugins/base.py (their analyze_string) NEEDS is for.
SOURCES = "506d5fe81902c9a1088a2b16466d62f7fc67f38878cfc1b90937286cacd2b6cb"


def may_hold(text: str) -> bool:
    """False when no plugin regex can match ``text`` (so none need load to scan it)."""
    checks = _checks()
    if checks is None:
        return True
    size = len(text)
    return any(
        size >= shortest and all(piece.search(text) for piece in pieces)
        for shortest, pieces in checks
    )


@cache
def _checks() -> tuple[tuple[int, tuple[re.Pattern[str], ...]], ...] | None:
    if installed_sources() != SOURCES:
        return None
    return tuple((shortest, tuple(map(re.compile, pieces))) for shortest, pieces in NEEDS)


def installed_sources() -> str | None:
    """The digest of the installed plugin sources (None: not readable as files)."""
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


def requirement(pattern: re.Pattern[str]) -> tuple[int, tuple[str, ...]]:
    """What every match of ``pattern`` has: its shortest length, and small regexes each of
    which finds something in any text the pattern matches (all of them must).

    Read from the parse tree: an item of a sequence that must match (a run of literal
    characters, a group, a repeat done at least once) is in every match, so each gives a
    piece: the literal run itself, a repeated character class as a run of that many
    characters of the class (``[a-z0-9]{32}``), an alternation as its branches' literals
    when every branch has one. A piece keeps the regex's case rule where it was read."""
    from re import _parser  # type: ignore[attr-defined]

    tree = _parser.parse(pattern.pattern, pattern.flags)
    pieces = _pieces(list(tree), _scope(pattern.flags))
    return tree.getwidth()[0], tuple(dict.fromkeys(pieces))


def _scope(flags: int) -> str:
    return ("i" if flags & re.IGNORECASE else "") + ("a" if flags & re.ASCII else "")


def _wrapped(body: str, scope: str) -> str:
    return f"(?{scope}:{body})" if scope else f"(?:{body})"


def _pieces(items: list[tuple[Any, Any]], scope: str) -> list[str]:
    from re import _constants as c  # type: ignore[attr-defined]

    pieces: list[str] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            pieces.append(_wrapped(re.escape("".join(run)), scope))
            run.clear()

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        close_run()
        if op is c.SUBPATTERN:
            _, add, remove, sub = av
            inner = _scope((add | _flags(scope)) & ~remove)
            pieces += _pieces(list(sub), inner)
        elif op is c.BRANCH:  # a piece of each branch: whichever matched has its own
            chosen = [max(_pieces(list(b), scope), key=len, default="") for b in av[1]]
            if chosen and all(chosen):
                pieces.append("(?:" + "|".join(sorted(set(chosen))) + ")")
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:  # done at least once
            body = list(av[2])
            chars = _class(body[0]) if len(body) == 1 else None
            if chars is not None:
                if av[0] >= 2:  # a run of one character of a class: too weak to test
                    pieces.append(_wrapped(f"{chars}{{{av[0]}}}", scope))
            else:
                pieces += _pieces(body, scope)
    close_run()
    return pieces


def _flags(scope: str) -> int:
    return (re.IGNORECASE if "i" in scope else 0) | (re.ASCII if "a" in scope else 0)


def _class(item: tuple[Any, Any]) -> str | None:
    """One character's pattern (a class, a literal) rebuilt as regex text; None for
    anything else (then no run is required of it)."""
    from re import _constants as c  # type: ignore[attr-defined]

    op, av = item
    if op is c.LITERAL:
        return re.escape(chr(av))
    if op is c.NOT_LITERAL:
        return f"[^{re.escape(chr(av))}]"
    if op is not c.IN:
        return None
    categories = {
        c.CATEGORY_DIGIT: r"\d",
        c.CATEGORY_NOT_DIGIT: r"\D",
        c.CATEGORY_SPACE: r"\s",
        c.CATEGORY_NOT_SPACE: r"\S",
        c.CATEGORY_WORD: r"\w",
        c.CATEGORY_NOT_WORD: r"\W",
    }
    parts: list[str] = []
    for kind, value in av:
        if kind is c.NEGATE and not parts:
            parts.append("^")
        elif kind is c.LITERAL:
            parts.append(re.escape(chr(value)))
        elif kind is c.RANGE:
            parts.append(f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}")
        elif kind is c.CATEGORY and value in categories:
            parts.append(categories[value])
        else:
            return None
    return f"[{''.join(parts)}]"
