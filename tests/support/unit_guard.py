"""The unit tier holds units: a test not marked ``integration`` that starts the whole
``gitmedic`` CLI in a subprocess, runs a tool ``make test`` builds (helm, kube-score,
actionlint: a fresh machine's ``make unit`` has none of them) or sleeps for real
fails, naming what it did and the marker to use.

Python's audit hook sees every ``subprocess.Popen`` of the process, whoever calls it
(the test, gitmedic's code, a thread it started), and ``time.sleep`` is wrapped (its
audit event is Python 3.12's; this runs on 3.11); the short sleeps of
``Popen.wait(timeout=...)`` wait for a child process and are let be. Neither can be
undone cleanly, so both are installed once and act only while a unit test's setup,
call or teardown runs; threads that were already running then (a server an
integration test left behind, pytest-xdist's own) are not the test's and are let
be. The offending call raises at once (a 30 s sleep is not waited out) and is also
recorded, so a test that swallows the exception still fails.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

# the pinned Go tools of .ci/tools.txt that `make test` builds for the integration tier
BUILT_TOOLS = frozenset({"helm", "kube-score", "actionlint", "kustomize"})
MOVE = "mark it @pytest.mark.integration (tests/support/unit_guard.py)"


class UnitTierViolation(RuntimeError):
    """A unit test did what only an integration test may."""


@dataclass
class Guard:
    active: bool = False
    foreign_threads: frozenset[int] = frozenset()  # running before the phase began
    violations: list[str] = field(default_factory=list)


GUARD = Guard()


def violation(event: str, args: tuple[Any, ...]) -> str:
    """What the audited call does that a unit test may not, or ""."""
    if event == "time.sleep":
        return f"time.sleep({args[0]}) sleeps for real" if args[0] > 0 else ""
    if event == "subprocess.Popen":
        executable, argv = args[0], args[1]
        return spawned(argv if not isinstance(argv, str | bytes) else [argv], executable)
    return ""


def spawned(argv: Sequence[Any], executable: Any = None) -> str:
    words = [os.fsdecode(a) for a in argv]
    program = os.path.basename(os.fsdecode(executable or (words[0] if words else "")))
    python = program.startswith("python")
    if program == "gitmedic" or (python and _runs_module(words[1:], "gitmedic")):
        return f"starts the whole gitmedic CLI ({' '.join(words[:4])} ...)"
    if program in BUILT_TOOLS:
        return f"runs {program}, which only `make test` builds"
    return ""


def _runs_module(words: list[str], package: str) -> bool:
    """``python -m gitmedic`` or ``-m gitmedic.something``."""
    return any(
        flag == "-m" and (module == package or module.startswith(f"{package}."))
        for flag, module in itertools.pairwise(words)
    )


def audit(event: str, args: tuple[Any, ...]) -> None:
    if not GUARD.active or event not in ("time.sleep", "subprocess.Popen"):
        return
    if threading.get_ident() in GUARD.foreign_threads:
        return
    found = violation(event, args)
    if found:
        GUARD.violations.append(found)
        raise UnitTierViolation(f"a unit test {found}: {MOVE}")


def _guarded(item: pytest.Item) -> bool:
    return item.get_closest_marker("integration") is None


def _phase(item: pytest.Item) -> Generator[None, object, object]:
    if not _guarded(item):
        return (yield)
    main = threading.main_thread().ident
    GUARD.foreign_threads = frozenset(t.ident for t in threading.enumerate() if t.ident) - {main}
    GUARD.violations = []
    GUARD.active = True
    try:
        result = yield
    finally:
        GUARD.active = False
    if GUARD.violations:
        pytest.fail(f"a unit test {'; '.join(GUARD.violations)}: {MOVE}", pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase(item))


def _audit_processes(event: str, args: tuple[Any, ...]) -> None:
    if event == "subprocess.Popen":  # 3.12's time.sleep event: the wrapper sees those
        audit(event, args)


def _sleep_of(real: Any) -> Any:
    def sleep(secs: float, /) -> None:
        # Popen.wait(timeout) polls its child with short sleeps: that waits for the
        # process, which the subprocess event has judged already
        if sys._getframe(1).f_globals.get("__name__") != "subprocess":
            audit("time.sleep", (secs,))
        real(secs)

    sleep.guarded = True  # type: ignore[attr-defined]
    return sleep


def pytest_configure(config: pytest.Config) -> None:
    if not getattr(time.sleep, "guarded", False):  # once per process (pytester nests)
        sys.addaudithook(_audit_processes)
        time.sleep = _sleep_of(time.sleep)
