"""The persistent sandboxed worker: same answers as a one-shot run, same walls, restarts."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest

from gitmedic.bot.memory.learned import load_learned
from gitmedic.bot.memory.sandbox import SandboxError, run_sandboxed
from gitmedic.bot.memory.worker import SandboxWorker, WorkerLimits
from gitmedic.detectors import run_detectors
from tests.memory.test_sandbox import GOOD, snapshot

LOOPS = GOOD.replace("    for obj in", "    while True:\n        pass\n    for obj in")


def module(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); its state in /proc says it is gone.
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split(") ")[1][0] != "Z"


def test_the_worker_answers_what_a_one_shot_run_answers(tmp_path: Path) -> None:
    path = module(tmp_path, "zero.py", GOOD)
    with SandboxWorker([path]) as worker:
        for replicas in (0, 2, 0):
            assert worker.run(path, snapshot(replicas)) == run_sandboxed(path, snapshot(replicas))
        assert worker.starts == 1


def test_one_worker_runs_every_module_it_was_given(tmp_path: Path) -> None:
    zero = module(tmp_path, "zero.py", GOOD)
    other = module(tmp_path, "other.py", GOOD.replace("learned-zero-replicas", "learned-other"))
    shared = snapshot(0)
    with SandboxWorker([zero, other]) as worker:
        assert worker.run(zero, shared).detector_id == "learned-zero-replicas"
        assert [f.detector for f in worker.run(other, shared).findings] == ["learned-other"]
        assert worker.starts == 1
        with pytest.raises(ValueError, match="not one of this worker's modules"):
            worker.run(tmp_path / "elsewhere.py", shared)


def test_module_globals_do_not_carry_over_between_runs(tmp_path: Path) -> None:
    counting = GOOD.replace(
        "def detect(snapshot):\n",
        "SEEN = []\n\n\ndef detect(snapshot):\n    SEEN.append(1)\n    if len(SEEN) > 1:\n"
        "        raise RuntimeError('state leaked')\n",
    )
    path = module(tmp_path, "count.py", counting)
    with SandboxWorker([path]) as worker:
        assert [len(worker.run(path, snapshot(0)).findings) for _ in range(3)] == [1, 1, 1]


@pytest.mark.integration
def test_a_runaway_run_is_stopped_in_time_and_the_next_one_works(tmp_path: Path) -> None:
    loops, good = module(tmp_path, "loops.py", LOOPS), module(tmp_path, "zero.py", GOOD)
    with SandboxWorker([loops, good], WorkerLimits(time_limit_s=1.5)) as worker:
        worker.run(good, snapshot(0))
        first = worker.pid
        started = time.monotonic()
        with pytest.raises(SandboxError, match=r"loops.py: ran past its time limit of 1.5s"):
            worker.run(loops, snapshot(0))
        assert time.monotonic() - started < 3
        assert first is not None and not alive(first) and worker.pid is None
        assert [f.resource.name for f in worker.run(good, snapshot(0)).findings] == ["cart"]
        assert worker.starts == 2


@pytest.mark.integration
def test_a_hoard_is_stopped_and_the_worker_replaced(tmp_path: Path) -> None:
    hoard = GOOD.replace(
        "    for obj in",
        "    hoard = []\n    while True:\n        hoard.append('x' * 10**7)\n    for obj in",
    )
    hoarder, good = module(tmp_path, "hoard.py", hoard), module(tmp_path, "zero.py", GOOD)
    with SandboxWorker([hoarder, good], WorkerLimits(time_limit_s=20)) as worker:
        with pytest.raises(SandboxError, match="memory limit"):
            worker.run(hoarder, snapshot(0))
        assert worker.run(good, snapshot(0)).findings and worker.starts == 2


@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        ("    import socket\n", "may not import socket"),
        ("    import os\n", "may not import os"),
        ("    open('written.txt', 'w')\n", "may not write files"),
        ("    import resource\n    resource.setrlimit(resource.RLIMIT_CPU, (1, 1))\n", "setrlimit"),
    ],
)
def test_forbidden_operations_are_refused_through_the_worker(
    tmp_path: Path, body: str, refusal: str
) -> None:
    source = GOOD.replace("def detect(snapshot):\n", "def detect(snapshot):\n" + body)
    bad, good = module(tmp_path, "bad.py", source), module(tmp_path, "zero.py", GOOD)
    with SandboxWorker([bad, good]) as worker:
        with pytest.raises(SandboxError, match=refusal):
            worker.run(bad, snapshot(0))
        assert worker.run(good, snapshot(0)).findings  # the refusal did not break the worker
    assert not (tmp_path / "written.txt").exists()


def test_a_detector_printing_does_not_garble_the_protocol(tmp_path: Path) -> None:
    noisy = GOOD.replace("def detect(snapshot):\n", "def detect(snapshot):\n    print('{}')\n")
    path = module(tmp_path, "noisy.py", noisy)
    with SandboxWorker([path]) as worker:
        assert worker.run(path, snapshot(0)).findings and worker.run(path, snapshot(0)).findings
        assert worker.starts == 1


def test_the_worker_retires_before_its_cpu_or_run_budget_is_spent(tmp_path: Path) -> None:
    path = module(tmp_path, "zero.py", GOOD)
    with SandboxWorker([path], WorkerLimits(time_limit_s=2, max_runs=2)) as worker:
        for _ in range(5):
            assert worker.run(path, snapshot(0)).findings
        assert worker.starts == 3


def test_limits_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match="CPU budget"):
        WorkerLimits(time_limit_s=10, cpu_budget_s=15)
    with pytest.raises(ValueError, match="positive time limit"):
        WorkerLimits(time_limit_s=0)


def test_close_and_garbage_collection_leave_no_process(tmp_path: Path) -> None:
    path = module(tmp_path, "zero.py", GOOD)
    worker = SandboxWorker([path])
    worker.run(path, snapshot(0))
    pid = worker.pid
    worker.close()
    worker.close()  # idempotent
    assert pid is not None and not alive(pid)
    dropped = SandboxWorker([path])
    dropped.run(path, snapshot(0))
    pid = dropped.pid
    del dropped
    gc.collect()
    assert pid is not None and not alive(pid)


def test_learned_detectors_run_in_one_worker_and_close_with_it(tmp_path: Path) -> None:
    detectors = tmp_path / ".gitmedic" / "detectors"
    detectors.mkdir(parents=True)
    (detectors / "zero.py").write_text(GOOD)
    (detectors / "other.py").write_text(GOOD.replace("learned-zero-replicas", "learned-other"))
    with load_learned(tmp_path) as learned:
        assert learned.worker is not None
        evaluation = run_detectors(learned.detectors, snapshot(0))
        assert {f.detector for f in evaluation.findings} == {
            "learned-other",
            "learned-zero-replicas",
        }
        assert learned.worker.starts == 1
        pid = learned.worker.pid
    assert pid is not None and not alive(pid)
