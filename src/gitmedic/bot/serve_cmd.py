"""``gitmedic serve``: wire settings, forge, actions and the webhook app, then run uvicorn.

The settings (flags, else the environment the Helm chart sets) are read by
:mod:`gitmedic.bot.serve_settings`, the monitor, forge and service are assembled
by :mod:`gitmedic.bot.serve_wiring`; this runs them. FastAPI and uvicorn are
imported here only, so other commands never pay for them.
"""

from __future__ import annotations

import argparse
import os

from gitmedic.bot.exits import UsageError
from gitmedic.bot.serve_settings import settings_from


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gitmedic.bot.extras import MEMORY_ENGINE, require

    require(MEMORY_ENGINE)

    from gitmedic.bot.github_env import GitHubEnvError
    from gitmedic.bot.serve_wiring import assemble
    from gitmedic.bot.server.admission import Admission
    from gitmedic.bot.server.app import create_app
    from gitmedic.bot.server.logs import configure_logging
    from gitmedic.bot.server.protocol import with_limits
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
    with served.running():
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
