"""The prefilter that spares loading detect-secrets: exact for the installed plugins.

A text passes it unless no plugin regex can match it; then the plugins are not loaded
(about 0.1 s of a CLI run). The table it reads is derived from the installed plugins'
regexes, and pinned to their sources' digest: when either is stale this file fails, and
at run time a stale digest scans every text as before.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.reconciler import secret_prefilter, secret_scan
from gitmedic.reconciler.redact import SecretRegistry
from tests.security.credential_corpus import PLANTED

pytest.importorskip("detect_secrets")

# One text per plugin regex (in NEEDS order) that the plugin finds a secret in.
_TOKENS = (
    'x = "AKCp8jQ4zCqfWnNQ1b7zVdM"',
    'artifactory_key = "AP6xxxxxxxxxxxxxxxxxx"',
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    '"' + "A" * 86 + '=="',
    "https://user:hunter22@example.org/",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "ghp_" + "a1B2" * 9,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl",
    "0123456789abcdef0123456789abcdef-us12",
    "//registry.npmjs.org/:_authToken=" + "abc123" * 6,
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none",
    "SG." + "a" * 22 + "." + "b" * 43,
    "xoxb-123456789012-abcdefghij",
    "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXX",
    "sq0csp-" + "a" * 43,
    "sk_live_" + "a1" * 12,
    "AC" + "a1" * 16,
    "SK" + "a1" * 16,
)


def _found(text: str) -> set[str]:
    return {s for p in secret_scan._plugins() for s in p.analyze_string(text) if s}


def test_the_table_is_derived_from_the_installed_plugins() -> None:
    derived = tuple(
        secret_prefilter.requirement(regex)
        for plugin in secret_scan._plugins()
        for regex in plugin.denylist
    )
    assert secret_prefilter.installed_sources() == secret_prefilter.SOURCES, (
        "detect-secrets' plugin sources changed: derive NEEDS again from\n"
        + "\n".join(f"    {need!r}," for need in derived)
    )
    assert derived == secret_prefilter.NEEDS


def test_a_sample_of_every_plugin_regex_passes_and_plain_addresses_do_not() -> None:
    assert len(_TOKENS) == len(secret_prefilter.NEEDS)
    for token in _TOKENS:
        assert _found(token), token  # the sample is one the library really reports
        assert secret_prefilter.may_hold(token), token
        assert secret_scan.detected(token), token
    assert not secret_prefilter.may_hold("svc-0000.bench.svc:8080")
    # long, with "://" and "." (basic auth's and Discord's literals), but no "@" and no run
    # of 23 token characters: what a finding's JSON holds, passed over
    assert not secret_prefilter.may_hold('{"summary": "http://backend:9898/echo is down."}' * 3)
    assert not secret_prefilter.may_hold("x" * 5)  # shorter than every regex's match


def test_every_planted_credential_the_plugins_find_passes() -> None:
    texts = [v for values in PLANTED.values() for v in values] + list(_TOKENS)
    for text in texts:
        for piece in (text, f"prefix {text} suffix", text.upper(), text.lower()):
            if _found(piece):
                assert secret_prefilter.may_hold(piece), piece


def test_a_text_without_any_literal_loads_no_plugin() -> None:
    secret_scan._plugins.cache_clear()
    try:
        assert secret_scan.detected("svc-0000:3000 warn 481 http-port") == ()
        assert secret_scan._plugins.cache_info().misses == 0
    finally:
        secret_scan._plugins.cache_clear()


def test_other_plugin_sources_scan_every_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secret_prefilter, "installed_sources", lambda: "another version")
    secret_prefilter._checks.cache_clear()
    try:
        assert secret_prefilter.may_hold("plain")
    finally:
        monkeypatch.undo()
        secret_prefilter._checks.cache_clear()
    assert not secret_prefilter.may_hold("plain")


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?i:ab|cde)x{2}", (4, ("(?:(?i:ab)|(?i:cde))", "(?:x{2})"))),
        (r"(?:abc)?de", (2, ("(?:de)",))),  # an optional group requires nothing
        (r"q(?:xyz)+", (4, ("(?:q)", "(?:xyz)"))),
        (r"[a-z]{4}-[^ ]{3}", (8, ("(?:[a-z]{4})", r"(?:\-)", "(?:[^\\ ]{3})"))),
        (r"a(?:b|[0-9])", (2, ("(?:a)",))),  # a branch with no piece: the alternation none
        (r"(?i)tok\d{2}", (5, ("(?i:tok)", r"(?i:[\d]{2})"))),
    ],
)
def test_requirement_reads_the_parse_tree(
    pattern: str, expected: tuple[int, tuple[str, ...]]
) -> None:
    assert secret_prefilter.requirement(re.compile(pattern)) == expected
    for piece in expected[1]:
        re.compile(piece)


def test_each_piece_finds_something_in_what_its_regex_matches() -> None:
    """Every piece of every plugin regex's requirement, on that regex's sample token."""
    needs = secret_prefilter.NEEDS
    for token, (shortest, pieces) in zip(_TOKENS, needs, strict=True):
        assert len(token) >= shortest, token
        assert all(re.search(piece, token) for piece in pieces), token


def test_registered_credentials_are_unchanged_for_plain_and_token_values() -> None:
    registry = SecretRegistry()
    registry.add_all(secret_scan.detected("warn svc-0000:3000"))
    registry.add_all(secret_scan.detected(f"webhook: {_TOKENS[15]}"))
    assert registry.scrub(_TOKENS[15]) != _TOKENS[15]
    assert registry.scrub("svc-0000:3000") == "svc-0000:3000"


def _detect(stream: Path) -> subprocess.CompletedProcess[str]:
    argv = ["detect", str(stream), "--namespace", "bench", "--format", "json"]
    cmd = [sys.executable, "-X", "importtime", "-m", "gitmedic", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@pytest.mark.integration
def test_detect_loads_the_plugins_only_for_a_value_they_could_match(tmp_path: Path) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
        "data: {LOG_LEVEL: warn, UPSTREAM: 'svc-0000:3000', RETRIES: '3'}\n"
    )
    done = _detect(plain)
    assert done.returncode == 0, done.stderr
    assert "detect_secrets" not in done.stderr
    token = tmp_path / "token.yaml"
    token.write_text(plain.read_text().replace("'3'", f"'{_TOKENS[14]}'"))
    done = _detect(token)
    assert done.returncode == 0, done.stderr
    assert "detect_secrets" in done.stderr  # the value that could be a Slack token was scanned
