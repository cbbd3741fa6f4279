"""A Lease API in memory with the API server's concurrency rule: every write bumps
the resourceVersion, and a write of a stale version (or a create of a name that
exists) is 409. ``down`` makes every call fail as an unreachable server would."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gitmedic.reconciler.leases.api import LeaseApiError, LeaseConflict
from gitmedic.reconciler.leases.record import LeaseRecord


@dataclass
class Clock:
    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class FakeLeases:
    leases: dict[str, LeaseRecord] = field(default_factory=dict)
    version: int = 0
    down: bool = False
    writes: int = 0

    def list(self, selector: str) -> dict[str, LeaseRecord]:
        self._check()
        wanted = dict(pair.split("=", 1) for pair in selector.split(",") if pair)
        return {
            name: record
            for name, record in self.leases.items()
            if all(record.labels.get(k) == v for k, v in wanted.items())
        }

    def create(self, name: str, record: LeaseRecord) -> LeaseRecord:
        self._check()
        if name in self.leases:
            raise LeaseConflict(f"leases {name} already exists")
        return self._put(name, record)

    def update(self, name: str, record: LeaseRecord) -> LeaseRecord:
        self._check()
        if name not in self.leases:
            raise LeaseApiError(f"leases {name} not found")
        if self.leases[name].version != record.version:
            raise LeaseConflict(f"leases {name}: the object has been modified")
        return self._put(name, record)

    def _put(self, name: str, record: LeaseRecord) -> LeaseRecord:
        self.version += 1
        self.writes += 1
        self.leases[name] = replace(record, version=str(self.version))
        return self.leases[name]

    def _check(self) -> None:
        if self.down:
            raise LeaseApiError("connection refused")

    def holder(self, name: str) -> str:
        return self.leases[name].holder
