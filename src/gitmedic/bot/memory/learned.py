"""Learned detectors from a manifest repo, as runner Detectors that execute in the sandbox.

``.gitmedic/detectors/<id>.py`` are untrusted code (an LLM may have written them),
so they never run in the bot's process. Loading one means: the AST allowlist
check, then one sandboxed run on an empty snapshot that reports the module's
``SPEC``; the returned :class:`~gitmedic.detectors.spec.Detector` carries that spec
and a ``detect`` that runs the module in the repo's persistent sandboxed worker
(time, memory and no network, see :mod:`.worker` and :mod:`.sandbox`): one
interpreter start for all of them, not one per evaluation. They therefore fit
:func:`~gitmedic.detectors.runner.run_detectors` next to ``builtin_registry()``;
the runner's isolation turns a sandbox failure into an error entry. The worker
is owned by the returned :class:`LearnedDetectors`: ``close()`` it (or use
``with``) when the detectors are done; garbage collection and interpreter exit
close it too.

A module that fails the check or does not load, or whose id is already taken
(by a built-in or another learned detector), is refused with the reason; the
others load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from gitmedic.bot.memory.ast_check import check_source
from gitmedic.bot.memory.guard import MEMORY
from gitmedic.bot.memory.sandbox import SandboxError
from gitmedic.bot.memory.worker import SandboxWorker, WorkerLimits
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import DetectFn, Detector, DetectorSpec, Scope

LEARNED_TIME_LIMIT_S = 4.0  # below the runner's default budget, so the sandbox stops first


@dataclass(frozen=True)
class LearnedDetectors:
    detectors: tuple[Detector, ...]
    refused: tuple[str, ...]  # "path: reason", one per module that did not load
    worker: SandboxWorker | None = None  # runs the detectors; None when there are none

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()

    def __enter__(self) -> LearnedDetectors:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


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
    checked = []
    for path in sorted((repo / MEMORY / "detectors").glob("*.py")):
        problems = _problems(path, repo)
        if problems:
            refused.append(f"{path.relative_to(repo).as_posix()}: {problems}")
        else:
            checked.append(path)
    if not checked:
        return LearnedDetectors((), tuple(refused))
    worker = SandboxWorker(checked, WorkerLimits(time_limit_s=time_limit_s))
    for path in checked:
        rel = path.relative_to(repo).as_posix()
        try:
            detector = _load(worker, path)
        except (SandboxError, ValueError, KeyError, TypeError) as exc:
            refused.append(f"{rel}: {exc}")
            continue
        if detector.id in used:
            refused.append(f"{rel}: detector id {detector.id!r} is already taken")
            continue
        used.add(detector.id)
        detectors.append(detector)
    return LearnedDetectors(tuple(detectors), tuple(sorted(refused)), worker)


def _problems(path: Path, repo: Path) -> str:
    rel = path.relative_to(repo).as_posix()
    problems = check_source(path.read_text(), rel)
    return "; ".join(p.removeprefix(f"{rel}:").strip(" :") for p in problems)


def _load(worker: SandboxWorker, path: Path) -> Detector:
    spec = spec_from_json(worker.run(path, Snapshot(())).spec)
    return Detector(spec, _sandboxed_detect(worker, path))


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


def _sandboxed_detect(worker: SandboxWorker, path: Path) -> DetectFn:
    def detect(snapshot: Snapshot) -> list[Finding]:
        return list(worker.run(path, snapshot).findings)

    return detect
