"""``gitmedic serve``'s settings and the webhook service built from them.

Below the command (:mod:`gitmedic.bot.cli.serve`, whose docstring lists the
environment read here) and its assembly (:mod:`gitmedic.bot.service.wiring`), which
both use them. The secret is registered with the redaction registry before
anything logs.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gitmedic.bot.commands.actions import BotActions
from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.forges import _git
from gitmedic.bot.service.webhook.handlers import ChangedFiles, Deps

if TYPE_CHECKING:
    from gitmedic.bot.service.dashboard_desk import DashboardDesk
    from gitmedic.bot.service.webhook.deliveries import SeenElsewhere
    from gitmedic.bot.service.webhook.metrics import Metrics
from gitmedic.bot.service.webhook.service import (
    DEFAULT_IN_FLIGHT_BYTES,
    DEFAULT_MAX_BODY,
    DEFAULT_READ_TIMEOUT_S,
    Service,
    ServiceConfig,
)
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.redact import REGISTRY


@dataclass(frozen=True)
class ClientLimits:
    """What one client may cost before its request is authenticated."""

    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S
    keep_alive_s: int = 5
    max_connections: int = 64  # requests being received; past it the oldest is evicted
    in_flight_bytes: int = DEFAULT_IN_FLIGHT_BYTES
    max_header_bytes: int = 16 * 1024

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ClientLimits:
        try:
            limits = cls(
                read_timeout_s=float(env.get("GITMEDIC_READ_TIMEOUT_S", cls.read_timeout_s)),
                keep_alive_s=int(env.get("GITMEDIC_KEEP_ALIVE_S", cls.keep_alive_s)),
                max_connections=int(env.get("GITMEDIC_MAX_CONNECTIONS", cls.max_connections)),
                in_flight_bytes=int(env.get("GITMEDIC_IN_FLIGHT_BYTES", cls.in_flight_bytes)),
            )
        except ValueError as exc:
            raise UsageError(f"client limits must be numbers: {exc}") from None
        if min(limits.read_timeout_s, limits.keep_alive_s) <= 0 or limits.max_connections < 1:
            raise UsageError(
                "GITMEDIC_READ_TIMEOUT_S, _KEEP_ALIVE_S and _MAX_CONNECTIONS must be positive"
            )
        return limits


@dataclass(frozen=True)
class ServeSettings:
    secret: str
    state_dir: Path
    repo: Path
    host: str = "127.0.0.1"
    port: int = 8080
    max_body_bytes: int = DEFAULT_MAX_BODY
    log_level: str = "info"
    watch: tuple[str, ...] = ()
    limits: ClientLimits = ClientLimits()


def settings_from(args: argparse.Namespace, env: Mapping[str, str]) -> ServeSettings:
    secret = env.get("GITMEDIC_WEBHOOK_SECRET", "")
    if not secret:
        raise UsageError("GITMEDIC_WEBHOOK_SECRET is not set: the webhook secret is required")
    REGISTRY.add(secret)

    def pick(flag: object, name: str, default: str) -> str:
        return str(flag) if flag is not None else env.get(name, default)

    try:
        port = int(pick(args.port, "GITMEDIC_PORT", "8080"))
        limit = int(pick(args.max_body_bytes, "GITMEDIC_MAX_BODY_BYTES", str(DEFAULT_MAX_BODY)))
    except ValueError as exc:
        raise UsageError(f"port and body limit must be integers: {exc}") from None
    return ServeSettings(
        secret=secret,
        state_dir=Path(pick(args.state_dir, "GITMEDIC_STATE_DIR", ".gitmedic-state")),
        repo=Path(pick(args.repo, "GITMEDIC_REPO", ".")),
        host=pick(args.host, "GITMEDIC_HOST", "127.0.0.1"),
        port=port,
        max_body_bytes=limit,
        log_level=pick(args.log_level, "GITMEDIC_LOG_LEVEL", "info"),
        watch=tuple(args.watch or ()),
        limits=ClientLimits.from_env(env),
    )


def git_changed_files(repo: Path) -> ChangedFiles:
    """Files a merge commit changed against its first parent (the base before the merge)."""

    def changed(sha: str) -> tuple[str, ...]:
        text = _git.out(repo, "diff", "--name-only", f"{sha}^1", sha, "--")
        return tuple(line for line in text.splitlines() if line)

    return changed


def watched_paths(repo: Path, extra: tuple[str, ...]) -> tuple[str, ...]:
    """App folders from ``.gitmedic/config.yaml`` (else of the apps adopted for the repo:
    :mod:`gitmedic.bot.discover.adopted`) plus ``--watch``; else the whole repo."""
    from gitmedic.reconciler.config import find_config
    from gitmedic.reconciler.manifests.app_charts import adopted_config
    from gitmedic.reconciler.manifests.config_file import load_config

    found = find_config(repo)
    config = load_config(found) if found else adopted_config(repo)
    paths = tuple(app.path for app in config.apps) if config else ()
    return (*paths, *extra) or ("",)


def build_service(
    settings: ServeSettings,
    forge: Forge,
    actions: BotActions,
    changed: ChangedFiles,
    *,
    repo: Path | None = None,  # the repo read for the config (a clone with --forge github)
    metrics: Metrics | None = None,  # shared with the monitor (service.monitor_metrics)
    dashboard: DashboardDesk | None = None,  # the apps' dashboards, for ticked boxes
    seen: SeenElsewhere | None = None,  # deliveries other replicas accepted
) -> Service:
    watched = watched_paths(repo or settings.repo, settings.watch)
    deps = Deps(forge, actions, changed, watched, dashboard=dashboard)
    return Service(service_config(settings), deps, metrics=metrics, seen=seen)


def build_routed_service(
    settings: ServeSettings,
    named: list[tuple[str, Deps]],
    metrics: Metrics,
    seen: SeenElsewhere | None = None,
) -> Service:
    """``serve --repos``: each delivery acts on the repository its payload names
    (:mod:`gitmedic.bot.service.webhook.routes`)."""
    from gitmedic.bot.service.webhook.routes import Routes

    return Service(service_config(settings), Routes.of(named), metrics=metrics, seen=seen)


def service_config(settings: ServeSettings) -> ServiceConfig:
    limits = settings.limits
    return ServiceConfig(
        settings.secret,
        settings.state_dir,
        settings.max_body_bytes,
        read_timeout_s=limits.read_timeout_s,
    )
