"""What the answerer reads and calls of the loop that owns it.

:class:`~gitmedic.bot.controller.answer.Answerer` is below
:class:`~gitmedic.bot.controller.loop.Loop` (the loop builds it and hands it itself);
naming the loop's parts it uses here, as a protocol the loop satisfies, keeps
that order in the imports and shows how wide the coupling is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from gitmedic.bot.controller.attempts import Attempts
from gitmedic.bot.controller.config import LoopConfig
from gitmedic.bot.controller.healthy_images import HealthyImages
from gitmedic.bot.controller.incidents import IncidentBook
from gitmedic.bot.controller.transact import Transactions
from gitmedic.bot.controller.wiring import Cluster
from gitmedic.bot.responder.incident import Incident
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.transaction import Journal


class LoopPorts(Protocol):
    @property
    def config(self) -> LoopConfig: ...
    @property
    def cluster(self) -> Cluster: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def forge(self) -> Forge: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def detectors(self) -> Sequence[Detector]: ...
    @property
    def healthy_images(self) -> HealthyImages: ...
    @property
    def book(self) -> IncidentBook: ...
    @property
    def txns(self) -> Transactions: ...
    @property
    def healthy(self) -> bool: ...

    def attempts(self, incident_id: str) -> Attempts: ...
    def open_incident(self, incident_id: str) -> Incident | None: ...
    def resolve(self, incident_id: str, how: str) -> None: ...
    def emit(self, kind: str, text: str, **data: Any) -> None: ...
