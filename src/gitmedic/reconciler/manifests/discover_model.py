"""What discovery proposes: an app per deployed environment, and what it left out, each
with the reason a person reads in ``gitmedic init``'s output."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Discovery", "LeftOut", "Proposal"]


@dataclass(frozen=True)
class Proposal:
    name: str  # wanted name; made unique and a DNS label when written
    namespace: str
    why: str
    path: str = ""  # a folder of the repo ('' with deployed_by: read from the deployer)
    deployed_by: tuple[str, str] | None = None  # (file, object name)
    helm: dict[str, Any] | None = None  # values and release, when no deployer file holds them
    engine: dict[str, str] = field(default_factory=dict)
    cluster: str = ""  # the cluster its deployer lives in, when the repo says

    @property
    def key(self) -> tuple[object, ...]:
        """Two deployers of one environment (two clusters' Kustomizations of one path)."""
        helm = tuple(sorted((k, str(v)) for k, v in (self.helm or {}).items()))
        return (self.path, self.deployed_by, self.namespace, helm)


@dataclass(frozen=True)
class LeftOut:
    what: str  # "file: Kind name"
    why: str


@dataclass
class Discovery:
    proposals: list[Proposal] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # found and followed, no app of its own
    deployers: int = 0  # Argo CD / Flux objects read

    def leave(self, what: str, why: str) -> None:
        if LeftOut(what, why) not in self.left_out:  # two clusters deploying one thing
            self.left_out.append(LeftOut(what, why))
