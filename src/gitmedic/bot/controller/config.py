"""The loop's settings for one app (from ``.gitmedic/config.yaml`` and the flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gitmedic.reconciler.config import LeversConfig, LlmConfig, PolicyConfig, ProbeConfig


@dataclass(frozen=True)
class LoopConfig:
    app: str
    repo: Path
    path: str = ""
    namespace: str = "default"
    # the HelmRelease or Application the app is, among others at ``path`` (AppConfig.deployer)
    deployer: str = ""
    interval_s: float = 10.0
    debounce_s: float = 30.0
    attempts: int = 3
    sync_timeout_s: float = 300.0
    window_s: float = 60.0
    oracle_interval_s: float = 10.0
    # Bad measurements tolerated in a row (oracles.failure_limit): in the window by each oracle,
    # and in the sync wait and the window for a critical signal the candidate caused (fail fast).
    failure_limit: int = 1
    probes: tuple[ProbeConfig, ...] = ()  # HTTP probes the verification window watches
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    llm: LlmConfig | None = None
    levers: LeversConfig = field(default_factory=LeversConfig)  # the runtime levers' ceilings
    lock_ttl_s: float = 120.0  # the writer lease (wall clock), renewed at every step
    # What the other apps of the namespace render (kind, name; bot.loop.siblings): read once
    # at start, with the collision check, so a live read leaves them out without rendering again
    siblings: frozenset[tuple[str, str]] = frozenset()
    settle_s: float = 300.0  # --once: healthy this long (alerts' for-windows) is healthy
