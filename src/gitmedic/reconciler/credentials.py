"""Which values of a Kubernetes object are credentials, found by structure, not by looks.

Pattern masking alone misses what does not look like anything (a Secret's value,
``MYSQL_PWD=Tr0ub4dor``); :func:`object_credentials` reads the object's structure
instead and names every value that must never leave the process:

- every value of a Secret (``data`` base64 and decoded, ``stringData``), and
  the credentials inside each decoded value (a kubeconfig, a ``.env`` file);
- every env value whose name says credential (``*_PASSWORD``, ``DB_PW``,
  ``API_CREDS``, ``*_KEY``, ``*TOKEN*``, ``*PASS*``, ``*SECRET*``: the rules
  are :mod:`.credential_names`') whatever its shape, and any env value that
  parses as one (below);
- the value after each credential-named flag of a container's ``command`` or
  ``args`` (``--db-password v``, ``--token=v``, and inside ``sh -c "..."``);
- every ConfigMap value that parses as a credential, and the whole value of a
  key named like one.

A text "parses as a credential" (:func:`text_credentials`) when it holds a DSN
with a password (``redis://:pw@host``, ``postgres://u:pw@h/db``), a PEM block, a
JSON/YAML document or INI/``.properties``/``.env`` lines with credential-named
keys (a kubeconfig's ``token`` and ``client-key-data``, a dockerconfig's ``auth``
among them), a credential held by its shape (:mod:`.credential_shapes`: a flag,
an inline ``AccountKey=`` or ``pw:`` pair, an ``Authorization`` header, a URL's
userinfo or webhook path), a token detect-secrets' plugins know
(:mod:`.secret_scan`), or is itself one long base64 or hex blob. A value is
registered with its other forms: decoded from base64, and a ``user:password``
pair's password.

Pure functions over plain data; :mod:`gitmedic.reconciler.redact` registers what
they find.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from gitmedic.reconciler.credential_names import is_credential_env_name, is_credential_name
from gitmedic.reconciler.credential_shapes import (
    argument_credentials,
    shaped_credentials,
    value_forms,
)
from gitmedic.reconciler.secret_scan import detected

_DSN = re.compile(r"[a-z][a-z0-9+.\-]*://(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@", re.IGNORECASE)
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----(?P<body>[\s\S]*?)-----END [A-Z0-9 ]+-----")
_PAIR_LINE = re.compile(
    r"^\s*(?:export\s+)?(?P<key>[A-Za-z_][\w.\-]*)\s*[=:]\s*(?P<value>\S.*?)\s*$", re.MULTILINE
)
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_REFERENCE = re.compile(r"^\$[({]\w+[)}]$")  # $(OTHER_VAR): the value is elsewhere
_URL_NO_USERINFO = re.compile(r"^[a-z][a-z0-9+.\-]*://[^@\s]*$", re.IGNORECASE)
_FILE_PATH = re.compile(r"^(?:/|\./|~/)[\w.\-/]+$")  # GOOGLE_APPLICATION_CREDENTIALS=/var/...


def object_credentials(body: Mapping[str, Any]) -> Iterator[str]:
    """Every credential value in one Kubernetes object (possibly with repeats)."""
    kind = body.get("kind")
    if kind == "Secret":
        yield from _secret_values(body)
    elif kind == "ConfigMap":
        yield from _config_map_values(body)
    envs: list[list[Any]] = []
    argvs: list[list[str]] = []
    _containers(body, envs, argvs, env=True, args=True)
    yield from _env_values(envs)
    yield from _argument_values(argvs)


def text_credentials(text: str) -> tuple[str, ...]:
    """The credentials a free-form value holds (a config file, a DSN, a blob...).

    The shapes (:mod:`.credential_shapes`) and detect-secrets scan the whole text
    once, here; the values nested in it (a JSON document's strings) are parts of the
    same text, so they are not scanned again.
    """
    if not text or len(text) >= 1_000_000:
        return ()
    return tuple(dict.fromkeys((*_text_credentials(text), *_scanned(text))))


@lru_cache(maxsize=1024)
def _scanned(text: str) -> tuple[str, ...]:
    shaped = [v for v in shaped_credentials(text) if not _REFERENCE.match(v)]
    return (*shaped, *detected(text))


def named_value_credentials(name: str, value: str, *, env: bool = False) -> Iterator[str]:
    """A value under ``name`` (env var, config key): all of it when the name says so,
    with its other forms (decoded, after an auth scheme); an env var's name is read
    the looser way (:func:`is_credential_env_name`)."""
    named = is_credential_env_name(name) if env else is_credential_name(name)
    if named and _could_be_secret(value):
        yield from value_forms(value)
    yield from text_credentials(value)


def manifest_objects(text: str) -> tuple[Mapping[str, Any], ...]:
    """The Kubernetes objects of a YAML stream (none when it is not one)."""
    if "kind:" not in text and '"kind"' not in text:
        return ()
    import yaml  # here: the CLI imports this module before any command, yaml or not

    try:
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return ()
    return tuple(d for d in docs if isinstance(d, Mapping) and isinstance(d.get("kind"), str))


def _secret_values(body: Mapping[str, Any]) -> Iterator[str]:
    for key in ("data", "binaryData"):
        for value in _str_values(body.get(key)):
            yield value
            decoded = _b64decode(value)
            if decoded is not None:
                yield decoded
                yield from text_credentials(decoded)
    for value in _str_values(body.get("stringData")):
        yield value
        yield from text_credentials(value)


def _config_map_values(body: Mapping[str, Any]) -> Iterator[str]:
    data = body.get("data")
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(value, str):
                yield from named_value_credentials(str(key), value)
    yield from _str_values(body.get("binaryData"))


def _env_values(lists: list[list[Any]]) -> Iterator[str]:
    """The credentials of env values (pod templates, CronJob templates, pods)."""
    for env in lists:
        for item in env:
            if isinstance(item, Mapping) and isinstance(item.get("value"), str):
                name = str(item.get("name", ""))
                yield from named_value_credentials(name, item["value"], env=True)


def _argument_values(lists: list[list[str]]) -> Iterator[str]:
    """The value after each credential-named flag in every ``command``/``args`` list."""
    for argv in lists:
        yield from argument_credentials(argv)
        yield from (v for a in argv for v in text_credentials(a))  # sh -c "..."


def _containers(
    value: Any, envs: list[list[Any]], argvs: list[list[str]], *, env: bool, args: bool
) -> None:
    """Every ``env`` list (into ``envs``) and every ``command``/``args`` list's strings
    (into ``argvs``) under ``value``, each in document order, in one walk of the object.

    An ``env`` list is not searched for more env lists, nor an argv for more argvs
    (``env``/``args`` say which of the two the walk still looks for below). A plain
    recursive function that skips scalars by type and tries ``dict`` before the
    ``Mapping`` ABC: two walks, a generator re-yielding through every level and an ABC
    check per node cost a tenth of reading a 10,000-object stream."""
    if type(value) is dict or isinstance(value, Mapping):
        if env:
            found = value.get("env")
            if isinstance(found, list):
                envs.append(found)
        for key, child in value.items():
            if type(child) in _SCALARS:
                continue
            below_args = args
            if args and key in ("command", "args") and isinstance(child, list):
                argvs.append([a for a in child if isinstance(a, str)])
                below_args = False
            below_env = env and key != "env"
            if below_env or below_args:
                _containers(child, envs, argvs, env=below_env, args=below_args)
    elif isinstance(value, list):
        for child in value:
            if type(child) not in _SCALARS:
                _containers(child, envs, argvs, env=env, args=args)


_SCALARS = frozenset({str, int, float, bool, type(None)})


@lru_cache(maxsize=4096)  # bisect and every monitor step re-read the same values
def _text_credentials(text: str) -> tuple[str, ...]:
    found: list[str] = [m["pw"] for m in _DSN.finditer(text)]
    found += _pem_parts(text)
    document = _document(text)
    if document is not None:
        found += _structured(document)
    found += [v for m in _PAIR_LINE.finditer(text) for v in _pair(m["key"], m["value"])]
    if _is_blob(text.strip()):
        found.append(text.strip())
    return tuple(dict.fromkeys(found))


def _pem_parts(text: str) -> list[str]:
    """A PEM block, and each of its base64 lines (JSON or YAML may re-wrap the block)."""
    parts = []
    for match in _PEM.finditer(text):
        parts.append(match[0])
        parts += [line.strip() for line in match["body"].splitlines() if len(line.strip()) >= 16]
    return parts


def _document(text: str) -> Any:
    """``text`` as a JSON or YAML mapping/list, or None when it is neither."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    if "\n" not in stripped.strip() and ": " not in stripped:
        return None  # a scalar: YAML would read it as itself
    import yaml

    try:
        loaded = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, (dict, list)) else None


def _structured(value: Any, key: str = "") -> list[str]:
    if isinstance(value, Mapping):
        return [v for k, child in value.items() for v in _structured(child, str(k))]
    if isinstance(value, list):
        return [v for child in value for v in _structured(child, key)]
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text = str(value)
        named = is_credential_name(key) and _could_be_secret(text)
        return [*(value_forms(text) if named else ()), *_text_credentials(text)]
    return []


def _pair(key: str, value: str) -> list[str]:
    """A ``KEY=value`` line (``.env``, INI, properties): a key like an env var's name."""
    unquoted = value.strip().strip("\"'")
    named = is_credential_env_name(key) if key.isupper() else is_credential_name(key)
    return list(value_forms(unquoted)) if named and _could_be_secret(unquoted) else []


def _could_be_secret(value: str) -> bool:
    """False for what no credential is: empty, a reference to another variable, a bare URL,
    a file's path (a file name is structure, never masked)."""
    value = value.strip()
    return bool(value) and not any(
        p.match(value) for p in (_REFERENCE, _URL_NO_USERINFO, _FILE_PATH)
    )


def _is_blob(value: str) -> bool:
    if _HEX.fullmatch(value):
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if not _BASE64.fullmatch(value):
        return False
    classes = (str.isdigit, str.islower, str.isupper)
    return all(any(test(c) for c in value) for test in classes)


def _str_values(data: Any) -> Iterator[str]:
    if isinstance(data, Mapping):
        yield from (v for v in data.values() if isinstance(v, str))


def _b64decode(value: str) -> str | None:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
