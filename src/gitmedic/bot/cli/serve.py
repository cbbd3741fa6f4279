"""``gitmedic serve``: wire settings, forge, actions and the webhook app, then run uvicorn.

Settings come from flags, else the environment (what the Helm chart sets):
``GITMEDIC_WEBHOOK_SECRET`` (required), ``GITMEDIC_STATE_DIR``, ``GITMEDIC_REPO``,
``GITMEDIC_HOST``, ``GITMEDIC_PORT``, ``GITMEDIC_MAX_BODY_BYTES``,
``GITMEDIC_LOG_LEVEL``; the limits on clients before they are authenticated,
``GITMEDIC_READ_TIMEOUT_S`` (whole request, headers and body),
``GITMEDIC_KEEP_ALIVE_S``, ``GITMEDIC_MAX_CONNECTIONS`` (requests being received
at once) and ``GITMEDIC_IN_FLIGHT_BYTES`` (their bytes received so far): past
either, the costliest stranger is evicted, never the newcomer (:mod:`.server.admission`);
``GITMEDIC_HEALTH_STALL_INTERVALS`` (``/healthz`` fails after that many monitor
intervals without progress: :mod:`gitmedic.bot.service.health`, default 10) and
``GITMEDIC_NOTIFY_URL`` (a Slack-compatible webhook told of escalations and
reverts: :mod:`gitmedic.bot.service.notify`); ``GITMEDIC_JOURNAL_URL`` (the journal in
PostgreSQL, for more than one replica: :mod:`gitmedic.bot.controller.journal_url`); the
monitor's ``GITMEDIC_FORGE`` (local|github), ``GITMEDIC_CLUSTER`` (sim|kube) and
``GITMEDIC_INTERVAL`` are read by :mod:`gitmedic.bot.service.wiring`, GitHub's by
:mod:`gitmedic.bot.forges.github_env`.
The secret is registered with the redaction registry before anything logs.
FastAPI and uvicorn are imported here only, so other commands never pay for them.

The settings are read and the service built by :mod:`gitmedic.bot.service.settings`
(below this command and :mod:`gitmedic.bot.service.wiring`, which both use them).
Plug-in points for ``gitmedic run``: its :func:`build_service` takes any
:class:`~gitmedic.bot.commands.actions.BotActions` (the transaction engine), and the
returned service's ``metrics`` are the ones the monitor records into.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.service.settings import settings_from


class _Terminated(Exception):
    """SIGTERM (Kubernetes stopping the pod), after uvicorn's graceful shutdown."""


@contextmanager
def _terminated_cleanly() -> Iterator[None]:
    """uvicorn re-raises the SIGTERM it caught once it has shut down; left to the default
    action, that kills the process before the monitor stops and the leases are released
    (the next replica would wait for them to expire). Raised as an exception instead, it
    unwinds through ``served.running()``, and serve exits 0."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    except _Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gitmedic.bot.common.extras import MEMORY_ENGINE, require
    from gitmedic.bot.controller.journal_url import require_driver

    require(MEMORY_ENGINE)
    require_driver()

    from gitmedic.bot.forges.github_env import GitHubEnvError
    from gitmedic.bot.service.webhook.admission import Admission
    from gitmedic.bot.service.webhook.app import create_app
    from gitmedic.bot.service.webhook.logs import configure_logging
    from gitmedic.bot.service.webhook.protocol import with_limits
    from gitmedic.bot.service.wiring import assemble
    from gitmedic.reconciler.config import ConfigError
    from gitmedic.reconciler.forge import ForgeError

    settings = settings_from(args, os.environ)
    configure_logging(settings.log_level)
    try:
        served = assemble(settings, args, os.environ)
    except (ForgeError, ConfigError, GitHubEnvError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    limits = settings.limits
    # A body as large as the limit must always fit, evicting everyone else if need be.
    in_flight = max(limits.in_flight_bytes, settings.max_body_bytes + limits.max_header_bytes)
    protocol = with_limits(limits.read_timeout_s, Admission(limits.max_connections, in_flight))
    with _terminated_cleanly(), served.running():
        uvicorn.run(
            create_app(served.service),
            host=settings.host,
            port=settings.port,
            log_config=None,
            timeout_graceful_shutdown=30,
            http=protocol,
            timeout_keep_alive=limits.keep_alive_s,
            h11_max_incomplete_event_size=limits.max_header_bytes,
        )
    return 0
