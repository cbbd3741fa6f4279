"""Hidden markers in PR, issue and comment bodies: the bot's state lives on the forge.

Three HTML comments, invisible when GitHub renders Markdown:

``<!-- gitmedic:state {json} -->``
    the bot's state for this PR (incident, attempt, phase...), compact JSON with
    sorted keys. ``<`` and ``>`` are written as JSON ``\\u003c`` / ``\\u003e`` escapes
    so no value can close the comment early.
``<!-- gitmedic:body-hash sha256:<hex> -->``
    the hash of the body the bot rendered (human part plus state marker). As in
    Renovate, the bot compares the hash of what it would render now with the hash
    stored in the body, never the body text itself: forges normalise whitespace,
    and people tick checkboxes, so comparing text would rewrite bodies that have
    not changed and undo people's edits.
``<!-- gitmedic:topic <topic> -->``
    first line of a bot comment: ``ensure_comment`` finds its comment by topic.

Everything here is pure; every forge implementation uses these same functions so
markers written by one are read by another.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from gitmedic.reconciler.forge import JsonObject, Validation

_STATE_RE = re.compile(r"<!-- gitmedic:state (\{.*?\}) -->")
_HASH_RE = re.compile(r"<!-- gitmedic:body-hash sha256:([0-9a-f]{64}) -->")
_TOPIC_RE = re.compile(r"\A<!-- gitmedic:topic ([A-Za-z0-9][A-Za-z0-9_.:/-]*) -->\n?")
_ANY_MARKER_RE = re.compile(r"\n*<!-- gitmedic:(?:state|body-hash) .*? -->")
TOPIC_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}")


def normalise_state(state: Mapping[str, object]) -> JsonObject:
    """``state`` as it will read back from the marker (tuples become lists...)."""
    loaded: JsonObject = json.loads(_dump(state))
    return loaded


def state_marker(state: Mapping[str, object]) -> str:
    text = _dump(state).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<!-- gitmedic:state {text} -->"


def extract_state(body: str) -> JsonObject | None:
    """The state in ``body``'s marker; ``None`` when absent or mangled by an edit."""
    match = _STATE_RE.search(body)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def render_body(body: str, state: Mapping[str, object] | None) -> str:
    """The full body to store: the human part, the state marker and the hash marker."""
    shown = strip_markers(body).rstrip()
    signed = f"{shown}\n\n{state_marker(state)}" if state is not None else shown
    return f"{signed}\n<!-- gitmedic:body-hash sha256:{_sha256(signed)} -->"


def extract_body_hash(body: str) -> str | None:
    match = _HASH_RE.search(body)
    return match.group(1) if match else None


def has_bot_marker(body: str) -> bool:
    """Whether the bot rendered this body (it carries the body hash marker)."""
    return extract_body_hash(body) is not None


def needs_body_update(stored: str, body: str, state: Mapping[str, object] | None) -> bool:
    """Whether ``stored`` must be replaced by ``render_body(body, state)``.

    Only when the state differs from the stored marker's, or the hash of the new
    rendering differs from the stored hash marker.
    """
    wanted_state = normalise_state(state) if state is not None else None
    if extract_state(stored) != wanted_state:
        return True
    return extract_body_hash(stored) != extract_body_hash(render_body(body, state))


def strip_markers(body: str) -> str:
    """The human part of a body: without the state and hash markers."""
    return _ANY_MARKER_RE.sub("", body)


def check_topic(topic: str) -> str:
    if not TOPIC_PATTERN.fullmatch(topic):
        raise Validation(
            f"comment topic {topic!r} must be 1-100 characters of letters, digits and "
            "'_.:/-', starting with a letter or digit"
        )
    return topic


def topic_body(topic: str, body: str) -> str:
    return f"<!-- gitmedic:topic {check_topic(topic)} -->\n{body}"


def extract_topic(body: str) -> str | None:
    match = _TOPIC_RE.match(body)
    return match.group(1) if match else None


def _dump(state: Mapping[str, object]) -> str:
    try:
        return json.dumps(state, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise Validation(f"bot state must be plain JSON: {exc}") from None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
