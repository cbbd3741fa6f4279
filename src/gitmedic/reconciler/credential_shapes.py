"""Credentials held by the *shape* of a piece of text, wherever it sits in a value.

:mod:`.credentials` reads objects (an env var's name, a Secret's data); inside
one of their string values a credential can still sit in a place whose shape
says so, whatever the value looks like:

- after a credential-named flag: ``--db-password v``, ``--token=v``, ``-p`` is
  not one (a flag's *name* must say credential);
- in a ``key=value`` or ``key: value`` pair whose key says credential, inline:
  connection strings (``AccountKey=...;``, ``Password=...;``), query strings
  (``?access_token=``, ``&sig=``), ``pw: v`` inside a values string;
- in an ``Authorization`` header: the credential after its scheme, and for
  ``Basic`` the decoded ``user:password`` and its password;
- in a URL: the userinfo (``https://token@host``, ``user:pw@``) and a token
  path, a webhook URL (Slack, Discord, Teams...) being its own credential.

Each found value also yields the forms it takes elsewhere: a base64 value
decoded, a ``user:password`` pair's password. Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote, urlsplit

from gitmedic.reconciler.credential_names import is_credential_name

_VALUE = r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&]+)"
# The separator and value in lookaheads: ``says: DB_PW=v`` is a pair at "says" and
# one at "DB_PW", and both must be seen. A flag's value may follow as the next item
# of a JSON or YAML list (``["--token", "v"]``).
_FLAG = re.compile(
    rf"(?:^|(?<=[\s\[\"',]))--?(?P<flag>[A-Za-z][\w.\-]*)"
    rf"(?=(?:=|[ \t]+|[\"']?[ \t]*,[ \t]*){_VALUE})"
)
_INLINE_PAIR = re.compile(
    rf"(?<![\w.\-/])(?P<key>[A-Za-z_][\w.\-]*)(?=(?:\s*=\s*|:[ \t]+){_VALUE})"
)
# A header as configs write it (``Authorization: Basic x``, ``-H "Authorization: ..."``,
# nginx's ``Authorization "Basic x"``), never ``rbac.authorization.k8s.io``.
_AUTH_HEADER = re.compile(
    r"(?<![\w.\-])authorization[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+)[\"']?"
    r"(?:(?P<scheme>basic|bearer|token|digest|apikey|negotiate)[ \t]+)?"
    r"(?P<credential>[A-Za-z0-9+/=_~\-][A-Za-z0-9+/=._~\-]{5,})",
    re.IGNORECASE,
)
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s\"'<>`]+", re.IGNORECASE)
# Hosts whose URL paths are the credential: whoever has the URL can post.
_WEBHOOK_HOSTS = re.compile(
    r"(?:^|\.)(?:hooks\.slack\.com|discord(?:app)?\.com|webhook\.office\.com|"
    r"outlook\.office\.com|chat\.googleapis\.com|api\.telegram\.org|hooks\.zapier\.com)$",
    re.IGNORECASE,
)
# $(VAR), ${VAR}, $VAR, {{ .Values.x }}: the value is elsewhere (a "$ecret!" is not one).
_REFERENCE = re.compile(r"\$(?:\(\w+\)|\{\w+\}|[A-Z_][A-Z0-9_]*$)|\{\{")
_SETTINGS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "none", "~", ""})
_BLOB_SEGMENT = re.compile(r"[A-Za-z0-9_\-]{20,}")
_FILE_NAME = re.compile(
    r"\.(?:ya?ml|json|jsonl|md|txt|tpl|env|conf|ini|properties)$", re.IGNORECASE
)


def shaped_credentials(text: str) -> Iterator[str]:
    """The credentials ``text`` holds by shape (the module doc), with their other forms."""
    for start, end in shaped_spans(text):
        yield from value_forms(text[start:end])
    for match in _URL.finditer(text):
        yield from url_credentials(match[0].rstrip(".,;)]}"))


def shaped_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where in ``text`` a credential sits by shape: the spans to mask in place."""
    for match in _FLAG.finditer(text):
        if is_credential_name(match["flag"]) and not not_a_value(match["value"]):
            yield _value_span(match)
    for match in _INLINE_PAIR.finditer(text):
        if is_credential_name(match["key"]) and not (
            _location(match) or not_a_value(match["value"])
        ):
            yield _value_span(match)
    for match in _AUTH_HEADER.finditer(text):
        yield match.span("credential")
    for match in _URL.finditer(text):
        yield from _url_spans(match)


def not_a_value(value: str) -> bool:
    """``automountServiceAccountToken: false``, ``TOKEN: ${FROM_ENV}``: a setting or a
    reference, not a credential."""
    bare = value.strip("\"'")
    return bare.lower() in _SETTINGS or bool(_REFERENCE.match(bare))


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    start, end = match.span("value")
    quoted = end - start >= 2 and match["value"][0] == match["value"][-1] in "\"'"
    return (start + 1, end - 1) if quoted else (start, end)


def _location(match: re.Match[str]) -> bool:
    """``app-secret.yaml: 12``: a file and its line, not a pair."""
    return bool(_FILE_NAME.search(match["key"])) and match["value"].split(":")[0].isdigit()


def _url_spans(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    url = match[0].rstrip(".,;)]}")
    scheme_end = url.find("://") + 3
    authority = url[scheme_end:].split("/", 1)[0]
    userinfo, at, _ = authority.rpartition("@")
    if at and userinfo:
        _, colon, password = userinfo.partition(":")
        start = match.start() + scheme_end + (len(userinfo) - len(password) if colon else 0)
        yield (start, match.start() + scheme_end + len(userinfo))
    host = authority.rpartition("@")[2].split(":")[0]
    if _WEBHOOK_HOSTS.search(host):
        path_start = scheme_end + len(authority) + 1
        if path_start < len(url):
            yield (match.start() + path_start, match.start() + len(url))


def argument_credentials(argv: list[str]) -> Iterator[str]:
    """A container's ``command``/``args``: the item after a credential-named flag."""
    for index, item in enumerate(argv):
        flag = re.fullmatch(r"--?(?P<flag>[A-Za-z][\w.\-]*)(?:=(?P<value>.*))?", item, re.DOTALL)
        if flag is None or not is_credential_name(flag["flag"]):
            continue
        if flag["value"] is not None:
            yield from value_forms(flag["value"])
        elif index + 1 < len(argv) and not argv[index + 1].startswith("-"):
            yield from value_forms(argv[index + 1])


def url_credentials(url: str) -> Iterator[str]:
    """The userinfo of ``url``, and its path when the host takes the path as a token."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return
    if parts.password:
        yield from value_forms(unquote(parts.password))
    elif parts.username:  # a lone userinfo is a token (https://ghp_x@github.com)
        yield from value_forms(unquote(parts.username))
    tail = parts.path.strip("/")
    if _WEBHOOK_HOSTS.search(host) and tail:
        yield url
        yield tail
        yield tail.split("/", 1)[-1]  # without its first segment ("services/", "api/")
    yield from (s for s in tail.split("/") if _BLOB_SEGMENT.fullmatch(s) and _mixed(s))


def value_forms(value: str) -> Iterator[str]:
    """A credential value and the forms it also takes: after an auth scheme, decoded."""
    value = value.strip()
    if not value:
        return
    yield value
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() in ("basic", "bearer", "token", "digest", "apikey"):
        yield rest.strip()
        value = rest.strip()
    decoded = _b64decode(value)
    if decoded:
        yield decoded
        user, colon, password = decoded.partition(":")
        if colon and user and password:
            yield password


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] in "\"'" else value


def _mixed(segment: str) -> bool:
    """A segment with digits and letters of both cases: generated, not a word."""
    return all(any(test(c) for c in segment) for test in (str.isdigit, str.islower, str.isupper))


def _b64decode(value: str) -> str | None:
    if len(value) < 8 or len(value) % 4:
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return decoded if decoded.isprintable() else None
