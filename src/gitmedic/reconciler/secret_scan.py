"""Free text checked by a maintained secret detector: detect-secrets' shape plugins.

Our own layers find credentials by *structure* (:mod:`.credentials`: where a
value sits says it is one). Free text has no structure to read: a model's
diagnosis, a log line, a config file's comment. For it we use the plugins of
detect-secrets (Yelp's library; its maintained fork ``bc-detect-secrets``
installs the same ``detect_secrets`` package) instead of growing our own list
of token regexes: each plugin knows one issuer's format (AWS, Azure storage,
Slack tokens and webhook URLs, GitHub, npm, Stripe, Twilio, JWTs, PEM keys...)
and is kept up to date upstream.

Two kinds of plugin are left out on purpose. The entropy plugins flag image
digests, commit shas and generated names, which a reader needs; the keyword
plugin reads ``secret: frontend-tls`` as a credential, which would mask
resource names (issue 22). Structure covers what they would find.

The library imports ``requests`` (about 0.1 s), so it is loaded on the first
scan, not when the CLI starts.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from functools import cache
from typing import Any

# module:class of each detect-secrets plugin used; an entry that no longer exists
# upstream is an ImportError at the first scan (loud), never a silently smaller set.
PLUGINS: tuple[str, ...] = (
    "artifactory:ArtifactoryDetector",
    "aws:AWSKeyDetector",
    "azure_storage_key:AzureStorageKeyDetector",
    "basic_auth:BasicAuthDetector",
    "cloudant:CloudantDetector",
    "discord:DiscordBotTokenDetector",
    "github_token:GitHubTokenDetector",
    "ibm_cloud_iam:IbmCloudIamDetector",
    "ibm_cos_hmac:IbmCosHmacDetector",
    "jwt:JwtTokenDetector",
    "mailchimp:MailchimpDetector",
    "npm:NpmDetector",
    "private_key:PrivateKeyDetector",
    "sendgrid:SendGridDetector",
    "slack:SlackDetector",
    "softlayer:SoftlayerDetector",
    "square_oauth:SquareOAuthDetector",
    "stripe:StripeDetector",
    "twilio:TwilioKeyDetector",
)
_MAX_LINE = 100_000  # a longer "line" is scanned in pieces: the plugins' regexes stay linear


def detected(text: str) -> tuple[str, ...]:
    """Every secret value the plugins find in ``text`` (each once, in order found)."""
    if not text:
        return ()
    found: dict[str, None] = {}
    for line in _lines(text):
        for plugin in _plugins():
            for secret in plugin.analyze_line(filename="text", line=line, line_number=0):
                if secret.secret_value:
                    found[str(secret.secret_value)] = None
    return tuple(found)


def _lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if len(line) <= _MAX_LINE:
            yield line
            continue
        step = _MAX_LINE // 2  # overlapping pieces: a token across a cut is whole in one
        for start in range(0, len(line), step):
            yield line[start : start + _MAX_LINE]


@cache
def _plugins() -> tuple[Any, ...]:
    plugins = []
    for entry in PLUGINS:
        module, name = entry.split(":")
        plugins.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)())
    return tuple(plugins)
