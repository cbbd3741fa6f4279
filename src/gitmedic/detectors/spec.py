"""Detector specs: metadata as data, logic in one pure function (kube-linter style).

A detector module exposes ``SPEC`` (a :class:`DetectorSpec`) and
``detect(snapshot) -> Iterable[Finding]``. ``SPEC.finding(...)`` builds findings
with the detector's id, default severity and playbooks filled in, so a detector
states only what it saw.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Mode, Snapshot


class Scope(enum.Enum):
    """Which state a detector can judge."""

    DESIRED = "desired"
    LIVE = "live"
    BOTH = "both"

    def applies_to(self, mode: Mode) -> bool:
        return self is Scope.BOTH or self.value == mode.value


@dataclass(frozen=True)
class Uncertainty:
    """Something the objects may not show that would turn a critical into a guess.

    A critical means the rendered desired state (or the live snapshot) alone
    proves the app breaks. Where the verdict depends on what the snapshot does
    not hold, the detector names that here, and in that situation reports a
    warning or info whose summary says what would make it certain (or nothing).
    A case file with ``downgrade: <id>`` proves each one (tests/detectors).
    """

    id: str  # kebab-case, cited by the case that proves the downgrade
    unseen: str  # what the snapshot does not show
    certain_if: str  # what would make the finding certain


@dataclass(frozen=True)
class DetectorSpec:
    id: str
    description: str
    kinds: frozenset[str]
    severity: Severity
    remediation: str
    scope: Scope = Scope.BOTH
    playbooks: tuple[str, ...] = ()
    # Consecutive evaluations before a finding activates / clears (monitor only).
    fire_after: int = 2
    clear_after: int = 2
    # What makes a critical of this detector uncertain; or, when nothing can, why
    # (built-in detectors declare one of the two; a meta-test holds them to it).
    uncertain_when: tuple[Uncertainty, ...] = ()
    certain_because: str = ""

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("-", "").isalnum() or self.id != self.id.lower():
            raise ValueError(f"detector id {self.id!r} must be lower-case kebab-case")
        if self.fire_after < 1 or self.clear_after < 1:
            raise ValueError(f"detector {self.id}: fire_after and clear_after must be >= 1")
        ids = [u.id for u in self.uncertain_when]
        if len(set(ids)) != len(ids):
            raise ValueError(f"detector {self.id}: uncertainty ids must be unique: {ids}")

    def finding(
        self,
        resource: Resource,
        summary: str,
        *,
        rule: str | None = None,
        evidence: str = "",
        severity: Severity | None = None,
        related: Iterable[Resource] = (),
        params: Mapping[str, Any] | None = None,
        unmasked: Mapping[str, str] | None = None,
    ) -> Finding:
        return Finding(
            detector=self.id,
            rule=rule or self.id,
            severity=severity or self.severity,
            resource=resource,
            summary=summary,
            evidence=evidence,
            related=tuple(sorted(set(related))),
            playbooks=self.playbooks,
            params=dict(params or {}),
            unmasked=dict(unmasked or {}),
        )


DetectFn = Callable[[Snapshot], Iterable[Finding]]


@dataclass(frozen=True)
class Detector:
    spec: DetectorSpec
    detect: DetectFn = field(compare=False)

    @property
    def id(self) -> str:
        return self.spec.id
