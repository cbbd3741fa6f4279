"""Free text checked by a maintained secret detector: detect-secrets' shape plugins.

Our own layers find credentials by *structure* (:mod:`.credentials`: where a
value sits says it is one). Free text has no structure to read: a model's
diagnosis, a log line, a config file's comment. For it we use the plugins of
detect-secrets (Yelp's library; its maintained fork ``bc-detect-secrets``
installs the same ``detect_secrets`` package) instead of growing our own list
of token regexes: each plugin knows one issuer's format (AWS, Azure storage,
Slack tokens and webhook URLs, GitHub, npm, Stripe, Twilio, JWTs, PEM keys...)
and is kept up to date upstream.

Three kinds of plugin are left out on purpose. The IBM Cloud, Cloudant and
SoftLayer plugins find a key by the name it is assigned to (``ibm_api_key =``),
which the structural layer already does for every credential name, and their
regexes cost most of the scan (0.37 of 0.51 s on kube-prometheus' 0.9 MB of
ConfigMaps, bench/RESULTS.md). The entropy plugins flag image
digests, commit shas and generated names, which a reader needs; the keyword
plugin reads ``secret: frontend-tls`` as a credential, which would mask
resource names (issue 22). Structure covers what they would find.

The library imports ``requests`` (about 0.1 s), so it is loaded on the first
scan that needs it, not when the CLI starts: a text that none of the plugins' regexes
could match (:mod:`.secret_prefilter`, exact) loads nothing. It is an optional
dependency (the ``llm``, ``github`` and ``serve`` extras install it; a detect-only
install stays light):
without it a scan finds nothing more than the structural layers do, and the
model's provider call, where free text matters most, refuses to start
(:func:`require`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from functools import cache
from typing import Any

from gitmedic.reconciler.secret_prefilter import MODULE, PLUGINS, may_hold

_CHUNK = 100_000  # a longer text is scanned in overlapping pieces: the regexes stay linear


def detected(text: str) -> tuple[str, ...]:
    """Every secret value the plugins find in ``text`` (each once, in order found).

    Each plugin's ``analyze_string`` (its issuer regexes) runs over the whole text,
    not line by line through ``analyze_line``: a config map of 25,000 lines costs
    one regex pass per plugin instead of 25,000 calls, and ``analyze_line`` adds
    what a file scanner needs and a scrubber must not do (the maintained fork's
    private-key plugin stats and reads the *file* named by its ``filename``).
    Their false-positive filters (an ``example.com`` on the line) are left out with
    it: for a scrubber a masked example costs less than a shown key.
    """
    if not text or not may_hold(text):  # no plugin regex can match: none is loaded
        return ()
    found: dict[str, None] = {}
    for chunk in _chunks(text):
        for plugin in _plugins():
            for secret in plugin.analyze_string(chunk):
                if isinstance(secret, str) and secret.strip():
                    found[secret.strip()] = None
    return tuple(found)


def _chunks(text: str) -> Iterator[str]:
    if len(text) <= _CHUNK:
        yield text
        return
    step = _CHUNK // 2  # overlapping: a token across a cut is whole in one of them
    for start in range(0, len(text) - step, step):
        yield text[start : start + _CHUNK]


def available() -> bool:
    try:
        return importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a broken install
        return False


def require() -> None:
    """ModuleNotFoundError naming the library (the CLI names the extra) when it is missing."""
    if not available():
        raise ModuleNotFoundError(f"No module named {MODULE!r}", name=MODULE)


@cache
def _plugins() -> tuple[Any, ...]:
    if not available():
        return ()
    plugins = []
    for entry in PLUGINS:
        module, name = entry.split(":")
        plugins.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)())
    return tuple(plugins)
