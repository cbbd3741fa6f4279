"""A chart repository's fetches over https share one TLS context, verified as urllib's default.

Making a context reads the system's CA certificates (about 22 ms of CPU); urllib made
one per connection, so a Flux repository with two https chart repositories paid it
twice in every detect. An http fetch makes none.
"""

from __future__ import annotations

import ssl
import urllib.request
from typing import Any

from gitmedic.reconciler.manifests import chart_pull


def _contexts(opener: Any) -> list[ssl.SSLContext]:
    return [h._context for h in opener.handlers if isinstance(h, urllib.request.HTTPSHandler)]


def test_https_fetches_share_one_verifying_tls_context_and_http_makes_none() -> None:
    chart_pull._tls.cache_clear()
    chart_pull._same_host_opener("http://charts.example/index.yaml")
    assert chart_pull._tls.cache_info().currsize == 0
    first = _contexts(chart_pull._same_host_opener("https://charts.example/index.yaml"))
    second = _contexts(chart_pull._same_host_opener("https://other.example/x-1.0.0.tgz"))
    assert len(first) == len(second) == 1 and first[0] is second[0]
    assert first[0].verify_mode == ssl.CERT_REQUIRED and first[0].check_hostname
