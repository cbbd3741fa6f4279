"""Redaction: secrets never leave the process (prompts, PR bodies, comments, logs).

Three layers, applied to anything the bot sends or writes:
1. structure: Secret objects lose their values (only key names remain); env vars
   and ConfigMap keys whose *names* say credential keep their name, lose the value;
2. content: values that *look* like credentials are masked wherever they appear
   (private keys, JWTs, cloud and forge tokens, Stripe-style keys, passwords in
   URLs, ``password=...`` pairs), issuers' tokens that detect-secrets' plugins
   know (:mod:`.secret_scan`: registered, so a later bare echo is masked too),
   and values held by their place (:mod:`.credential_shapes`: after
   ``--token``, in ``AccountKey=...;``, an ``Authorization`` header, a URL's
   userinfo or webhook path), masked in place in any text, the model's included;
3. known values: every exact secret value the process learned is masked in all
   text, through the process-wide :data:`REGISTRY`. Its own tokens are
   registered where they are read; the cluster's and the repo's credentials are
   registered *structurally* as objects are read (:func:`register_objects`, called
   by the desired-state loader and the live-cluster reader; which values count
   is :mod:`gitmedic.reconciler.credentials`' business), so a value that looks
   like nothing in particular (``MYSQL_PWD``, a Secret's value) is still masked
   when a model echoes it.

What is never masked is structure. The names the same objects declare (names,
namespaces, label keys and values) are registered as *identifiers*: a Secret
value that is an ordinary word (``frontend``) is not masked where it is, or is
part of, such a name, since the name says nothing about the Secret and a
reader needs it. And a file name with a line (``app-secret.yaml:12``) is a
location, not a ``secret: value`` pair. A credential in a value position is
masked where it is held (the snapshot drops Secret values, layer 1 masks
credential-named values, layer 2 every ``key=value`` of a credential name).

:func:`redact_text` is the scrubber; the places text leaves the process apply
it at one seam each (:mod:`gitmedic.reconciler.outbound`: the forge adapters'
writing verbs, the process's stdout and stderr; the LLM provider call; the
logging handlers; memory files).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from gitmedic.reconciler.credential_names import is_credential_env_name, names_a_place
from gitmedic.reconciler.credential_shapes import not_a_value, shaped_spans
from gitmedic.reconciler.credentials import manifest_objects, object_credentials, text_credentials
from gitmedic.reconciler.secret_scan import detected

MASK = "****"
_SECRET_NAME = re.compile(
    r"(pass(word|wd)?|secret|token|api[_-]?key|apikey|credential|private[_-]?key|auth|cookie|session[_-]?key|dsn)",
    re.IGNORECASE,
)
_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),  # JWT
    re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}\b"),  # GitHub tokens
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9_]{8,}\b"),  # Stripe-style keys
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),  # LLM provider keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack tokens
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
]
_URL_PASSWORD = re.compile(r"(?P<pre>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<pw>[^@/\s]+)(?P<post>@)")
_PAIR = re.compile(
    r"(?P<key>\b[\w.-]*(?:password|passwd|secret|token|api[_-]?key)[\w.-]*\s*[=:]\s*)(?P<value>[^\s,;&\"']+)",
    re.IGNORECASE,
)
# ``app-secret.yaml:12`` (a file and line, as locations are written) is not a pair.
_FILE_KEY = re.compile(r".*\.(?:ya?ml|json|jsonl|md|txt|tpl)\s*:\s*", re.IGNORECASE)
_LINE_VALUE = re.compile(r"\d+(?::\d+)?[^\w]*")


def looks_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask credential-looking content and every registered secret value in ``text``.

    What detect-secrets' plugins find is registered (masked wherever it shows, in
    this text and later ones); a value that only its place marks as a credential
    (after ``--token``, in ``AccountKey=...;``, a URL's userinfo) is masked in place.
    """
    REGISTRY.add_all(detected(text))
    text = _masked_spans(text, sorted(set(shaped_spans(text))))
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m['pre']}{MASK}{m['post']}", text)
    text = _PAIR.sub(_masked_pair, text)
    return REGISTRY.scrub(text)


def _masked_spans(text: str, spans: list[tuple[int, int]]) -> str:
    pieces, last = [], 0
    for start, end in spans:
        if end <= start or start < last:
            continue  # empty, or inside a span already masked
        pieces += [text[last:start], MASK]
        last = end
    return "".join([*pieces, text[last:]])


def _masked_pair(match: re.Match[str]) -> str:
    if _FILE_KEY.fullmatch(match["key"]) and _LINE_VALUE.fullmatch(match["value"]):
        return match[0]  # a location: its line number stays
    if names_a_place(match["key"].strip().rstrip(":=").strip()):
        return match[0]  # SECRET_NAME=reports-db, secretKeyRef: ...: where it is, not what
    if not_a_value(match["value"]) or match["value"].endswith(":"):
        return match[0]  # automountServiceAccountToken: false; or the next line's key
    return f"{match['key']}{MASK}"


def redact_object(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Kubernetes object safe to show: Secret values gone, credential-named values masked."""
    out = _redact_value(body)
    assert isinstance(out, dict)
    if body.get("kind") == "Secret":
        for key in ("data", "stringData"):
            if isinstance(out.get(key), dict):
                out[key] = {k: MASK for k in out[key]}
    return out


def _redact_value(value: Any, key: str = "") -> Any:
    if isinstance(value, Mapping):
        if "name" in value and "value" in value and _secret_env_name(str(value["name"])):
            return {**{k: _redact_value(v, k) for k, v in value.items()}, "value": MASK}
        return {k: (MASK if _secret_key(k, v) else _redact_value(v, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, key) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _secret_env_name(name: str) -> bool:
    return looks_secret_name(name) or is_credential_env_name(name)


def _secret_key(key: str, value: Any) -> bool:
    # A mapping key named like a credential (ConfigMap data, annotations) with a scalar value.
    return isinstance(value, str) and bool(value) and looks_secret_name(key)


def redact_json(value: Any) -> Any:
    """``value`` (parsed JSON) with every string in it redacted; keys are kept."""
    if isinstance(value, Mapping):
        return {k: redact_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return redact_text(value) if isinstance(value, str) else value


MIN_SECRET = 6  # shorter strings would mask ordinary words


class SecretRegistry:
    """Exact secret values this process knows (tokens, keys, credentials read); scrubbed.

    A value is kept in the forms it takes in text: as is, JSON-escaped (a tool
    result or a state marker is JSON), and line by line for a multi-line value
    (YAML or a re-wrapped PEM block breaks it differently).
    """

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._ordered: tuple[str, ...] = ()
        self._identifiers: set[str] = set()  # names objects declare: never masked
        self._lock = threading.Lock()

    def add_identifiers(self, names: Iterable[str]) -> None:
        """Names the objects declare (resource names, namespaces, labels): structure, which
        a registered value that happens to be the same word never masks."""
        fresh = {n for n in names if len(n) >= MIN_SECRET} - self._identifiers
        if fresh:
            with self._lock:
                self._identifiers |= fresh

    def add(self, value: str | None) -> None:
        self.add_all((value,) if value else ())

    def add_all(self, values: Iterable[str]) -> None:
        forms = {f for v in values for f in _forms(v) if len(f) >= MIN_SECRET} - self._values
        if forms:
            with self._lock:
                self._values |= forms
                self._ordered = tuple(sorted(self._values, key=len, reverse=True))

    def __contains__(self, value: str) -> bool:
        return value in self._values

    def scrub(self, text: str) -> str:
        for value in self._ordered:  # longest first: a value inside another goes second
            if value in text:
                text = self._masked(text, value)
        return text

    def _masked(self, text: str, value: str) -> str:
        """``text`` with ``value`` masked, except where it is (part of) an identifier."""
        names = [n for n in self._identifiers if value in n and n in text]
        if not names:
            return text.replace(value, MASK)
        kept = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
        pieces, last = [], 0
        for match in kept.finditer(text):
            pieces += [text[last : match.start()].replace(value, MASK), match[0]]
            last = match.end()
        return "".join([*pieces, text[last:].replace(value, MASK)])


def _forms(value: str) -> set[str]:
    value = value.strip()
    forms = {value, json.dumps(value)[1:-1]}
    if "\n" in value:
        forms |= {line.strip() for line in value.splitlines() if len(line.strip()) >= 12}
    return forms


REGISTRY = SecretRegistry()


def register_objects(bodies: Iterable[Mapping[str, Any]]) -> None:
    """Register every credential in these Kubernetes objects before any text about them
    leaves, and the names they declare, which stay readable."""
    bodies = list(bodies)
    REGISTRY.add_all(v for body in bodies for v in object_credentials(body))
    REGISTRY.add_identifiers(n for body in bodies for n in _identifiers(body))


def _identifiers(body: Mapping[str, Any]) -> Iterable[str]:
    meta = body.get("metadata")
    if not isinstance(meta, Mapping):
        return
    for key in ("name", "namespace", "generateName"):
        if isinstance(meta.get(key), str):
            yield meta[key]
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        yield from (str(k) for k in labels)
        yield from (v for v in labels.values() if isinstance(v, str))


def register_text(text: str) -> None:
    """Register the credentials a free-form text holds (a file the model asked to read).

    A text of Kubernetes manifests registers its objects' credentials, as if loaded.
    """
    REGISTRY.add_all(text_credentials(text))
    register_objects(manifest_objects(text))


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's rendered message."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage())
        record.args = None
        return True
