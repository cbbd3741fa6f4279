"""Which names say "the value here is a credential": env vars, config keys, flags.

Two strengths. :func:`is_credential_name` wants a credential word as a whole
segment of the name (``DB_PASSWORD``, ``mysql.pwd``, ``client-key-data``,
``AccountKey``, ``DB_PW``, ``API_CREDS``): it is used for keys and flags inside
free text, where a looser rule would register ordinary words (``--passthrough
enabled``). :func:`is_credential_env_name` adds the words that mean credential
anywhere in an environment variable's name (``*TOKEN*``, ``*PASS*``,
``*SECRET*``, ``*CRED*``): an env var is declared to be read by a program, and
a value wrongly kept from a reader costs less than a password shown.
"""

from __future__ import annotations

import re

_CREDENTIAL_WORD = (
    r"pass(?:word|wd|phrase)?|pwd|pw|secret|token|credentials?|creds?|api[_-]?key|apikey|"
    r"private[_-]?key|client[_-]?key(?:[_-]data)?|key|keys|dsn|cookie|session|salt|"
    r"auth[_-]?(?:token|key)|authorization|bearer|signature|sig|signing[_-]?key|cert[_-]?key"
)
# A credential word as a whole segment of a name, or its end: DB_PW, mysql.pwd, AccountKey.
_CREDENTIAL_NAME = re.compile(
    rf"(?:^|[_.\-])(?:{_CREDENTIAL_WORD})(?:$|[_.\-])|(?:{_CREDENTIAL_WORD})$|^auth$",
    re.IGNORECASE,
)
_CREDENTIAL_ANYWHERE = re.compile(r"token|pass|secret|cred", re.IGNORECASE)
# Names about a credential that hold no credential: where it is (TOKEN_FILE,
# --password-file, SECRET_NAME, TOKEN_URL), or how it is used (SESSION_TTL).
_ABOUT_A_CREDENTIAL = re.compile(
    r"(?:file|path|dir|name|ref|url|uri|endpoint|host|port|mount|location|length|ttl|"
    r"timeout|expiry|type|mode|enabled|header|id|env|var)s?$",
    re.IGNORECASE,
)


# Kubernetes' own "key" fields (secretKeyRef.key, items[].key, a toleration's or a
# selector's key) name a key: structure a reader needs, never a credential.
_STRUCTURAL = frozenset({"key", "keys"})


def is_credential_name(name: str) -> bool:
    name = name.strip()
    if name.lower() in _STRUCTURAL:
        return False
    return bool(_CREDENTIAL_NAME.search(name)) and not names_a_place(name)


def is_credential_env_name(name: str) -> bool:
    name = name.strip()
    if name.lower() in _STRUCTURAL:
        return False
    named = _CREDENTIAL_NAME.search(name) or _CREDENTIAL_ANYWHERE.search(name)
    return bool(named) and not names_a_place(name)


def names_a_place(name: str) -> bool:
    """A name ending in a word about a credential, after a separator or camelCase."""
    match = _ABOUT_A_CREDENTIAL.search(name.strip())
    if match is None or match.start() == 0:
        return False
    name = name.strip()
    before, first = name[match.start() - 1], name[match.start()]
    return before in "_.-" or (before.islower() and first.isupper())
