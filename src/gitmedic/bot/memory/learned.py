"""Learned detectors from a manifest repo, as runner Detectors that execute in the sandbox.

``.gitmedic/detectors/<id>.py`` are untrusted code (an LLM may have written them),
so they never run in the bot's process. Loading one means: the AST allowlist
check, then one sandboxed run on an empty snapshot that reports the module's
``SPEC``; the returned :class:`~gitmedic.detectors.spec.Detector` carries that spec
and a ``detect`` that runs the module in a fresh sandboxed subprocess per
evaluation (time, memory and no network, see :mod:`.sandbox`). They therefore fit
:func:`~gitmedic.detectors.runner.run_detectors` next to ``builtin_registry()``;
the runner's isolation turns a sandbox failure into an error entry.

A module that fails the check or does not load, or whose id is already taken
(by a built-in or another learned detector), is refused with the reason; the
others load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmedic.bot.memory.ast_check import check_source
from gitmedic.bot.memory.guard import MEMORY
from gitmedic.bot.memory.sandbox import SandboxError, run_sandboxed
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectFn, Detector, DetectorSpec, Scope

LEARNED_TIME_LIMIT_S = 4.0  # below the runner's default budget, so the sandbox stops first


@dataclass(frozen=True)
class LearnedDetectors:
    detectors: tuple[Detector, ...]
    refused: tuple[str, ...]  # "path: reason", one per module that did not load


def load_learned(
    repo: Path,
    *,
    taken: Iterable[str] = (),
    time_limit_s: float = LEARNED_TIME_LIMIT_S,
) -> LearnedDetectors:
    """The learned detectors of ``repo``; ``taken``: ids already registered (built-ins)."""
    used = set(taken)
    detectors: list[Detector] = []
    refused: list[str] = []
    for path in sorted((repo / MEMORY / "detectors").glob("*.py")):
        rel = path.relative_to(repo).as_posix()
        try:
            detector = _load(path, rel, time_limit_s)
        except (SandboxError, ValueError, KeyError, TypeError) as exc:
            refused.append(f"{rel}: {exc}")
            continue
        if detector.id in used:
            refused.append(f"{rel}: detector id {detector.id!r} is already taken")
            continue
        used.add(detector.id)
        detectors.append(detector)
    return LearnedDetectors(tuple(detectors), tuple(refused))


def _load(path: Path, rel: str, time_limit_s: float) -> Detector:
    problems = check_source(path.read_text(), rel)
    if problems:
        raise ValueError("; ".join(p.removeprefix(f"{rel}:").strip(" :") for p in problems))
    probe = run_sandboxed(path, Snapshot(()), time_limit_s=time_limit_s)
    spec = spec_from_json(probe.spec)
    return Detector(spec, _sandboxed_detect(path, time_limit_s))


def spec_from_json(data: Mapping[str, Any]) -> DetectorSpec:
    return DetectorSpec(
        id=str(data["id"]),
        description=str(data["description"]),
        kinds=frozenset(map(str, data["kinds"])),
        severity=Severity(data["severity"]),
        remediation=str(data["remediation"]),
        scope=Scope(data["scope"]),
        playbooks=tuple(map(str, data["playbooks"])),
        fire_after=int(data["fire_after"]),
        clear_after=int(data["clear_after"]),
    )


def _sandboxed_detect(path: Path, time_limit_s: float) -> DetectFn:
    def detect(snapshot: Snapshot) -> list[Finding]:
        return list(run_sandboxed(path, snapshot, time_limit_s=time_limit_s).findings)

    return detect
