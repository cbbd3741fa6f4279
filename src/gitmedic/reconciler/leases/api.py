"""The calls the coordinator makes of the API server, in one namespace.

Three verbs: list (by label selector), create, update; ``get`` and ``watch`` are
in the Role for ``kubectl`` and future watches, never needed here. An update
carries the record's ``resourceVersion``, so the API server applies it only to
the version the writer read: of two replicas racing for one Lease, exactly one
write lands and the other is answered 409 (:class:`LeaseConflict`), as is a
create of a name that exists. Every other failure is :class:`LeaseApiError`:
the coordinator then holds nothing new and renews nothing (fail closed).
"""

from __future__ import annotations

from typing import Protocol

from gitmedic.reconciler.leases.record import LeaseRecord


class LeaseApiError(Exception):
    """The Lease API could not be used (unreachable, refused, a bad answer)."""


class LeaseConflict(LeaseApiError):
    """HTTP 409: another writer changed (or created) the Lease first."""


class LeaseApi(Protocol):
    def list(self, selector: str) -> dict[str, LeaseRecord]:
        """Every Lease whose labels match ``selector`` (``key=value,...``), by name."""
        ...

    def create(self, name: str, record: LeaseRecord) -> LeaseRecord:
        """The created Lease (with its resourceVersion); 409 when ``name`` exists."""
        ...

    def update(self, name: str, record: LeaseRecord) -> LeaseRecord:
        """The Lease replaced, if still at ``record.version``; else 409."""
        ...
