"""Benchmark: what a learned detector costs the monitor, side by side with the built-in it refines.

A learned detector is untrusted code, so it runs sandboxed: once a fresh
subprocess per run (bot/memory/sandbox.py, still the memory guard's one-shot
check), now the repo's persistent sandboxed worker (bot/memory/worker.py, the
monitor's path). This measures, on one live snapshot of the bundled shop (the
sim, catalog's image never pushed):

- the built-in ``pod-image-pull`` in process;
- the lesson detector reflection writes (``pod-image-pull`` on a container that
  also sets ``command``), its logic in process (no sandbox);
- the same module through the one-shot sandbox (a fresh interpreter per run);
- the same module through the persistent worker, a new snapshot object each run
  (so the snapshot is encoded and sent every time, as on a monitor tick);
- three such modules in one worker on one new snapshot (one evaluation of three
  learned detectors: the snapshot is sent once, then only the module path).

Median of RUNS each; prints a Markdown table and the ratios.

    .venv/bin/python bench/learned_detectors.py
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import ModuleType

from gitmedic.bot.loop.sim_cluster import SimCluster
from gitmedic.bot.memory.lesson import Lesson, render_detector
from gitmedic.bot.memory.sandbox import run_sandboxed
from gitmedic.bot.memory.templated import Context
from gitmedic.bot.memory.worker import SandboxWorker
from gitmedic.detectors.builtin import pod_image_pull
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot

RUNS = 30
APP, NAMESPACE = "apps/shop", "shop"


def _git(repo: Path, *argv: str) -> str:
    ident = ["-c", "user.name=b", "-c", "user.email=b@example.com"]
    out = subprocess.run(["git", "-C", str(repo), *ident, *argv], check=True,
                         capture_output=True, text=True)  # fmt: skip
    return out.stdout.strip()


def live_snapshot(tmp: Path) -> Snapshot:
    repo = tmp / "manifests"
    shutil.copytree(Path(str(resources.files("gitmedic") / "examples" / "shop")), repo / APP)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "baseline")
    healthy = _git(repo, "rev-parse", "HEAD")
    catalog = repo / APP / "catalog.yaml"
    text = catalog.read_text().replace("shop-catalog:2.0.1", "shop-catalog:2.1.0")
    catalog.write_text(text.replace("    spec:\n      containers:\n        - name: server\n",
                                    "    spec:\n      containers:\n        - name: server\n"
                                    '          command: ["/catalog"]\n', 1))  # fmt: skip
    _git(repo, "commit", "-qam", "release")
    cluster = SimCluster(repo, APP, NAMESPACE, baseline_rev=healthy)
    cluster.clock.sleep(60)
    return cluster.snapshot()


def lesson_module() -> str:
    symptom = Finding("pod-image-pull", "image-pull", Severity.CRITICAL,
                      Resource("Deployment", NAMESPACE, "catalog"), "x",
                      params={"container": "server"})  # fmt: skip
    lesson = Lesson(symptom, ("image", "command"), ("command",), ("image",), ("pod-crashloop",))
    ctx = Context("bench", "bisect", "", "", (), "CRITICAL")
    return render_detector(lesson, "learned-bench", "bench", ctx)


def median_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def fresh(snapshot: Snapshot) -> Snapshot:
    """An equal snapshot, a new object: the worker resends it as it would on a new tick."""
    return Snapshot(list(snapshot), mode=snapshot.mode)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="gitmedic-bench-") as scratch:
        tmp = Path(scratch)
        snapshot = live_snapshot(tmp)
        source = lesson_module()
        paths = [tmp / f"learned{i}.py" for i in range(3)]
        for i, p in enumerate(paths):
            p.write_text(source.replace("learned-bench", f"learned-bench-{i}"))
        path = paths[0]
        module = ModuleType("learned")
        exec(compile(source, str(path), "exec"), module.__dict__)  # our own template
        found = list(module.detect(snapshot))
        with SandboxWorker(paths) as worker:
            one_shot = run_sandboxed(path, snapshot)
            assert found and one_shot.findings, "the lesson must fire"
            assert worker.run(path, fresh(snapshot)) == one_shot, "both paths must agree"

            def three() -> None:
                shared = fresh(snapshot)
                for p in paths:
                    worker.run(p, shared)

            rows = {
                "built-in pod-image-pull, in process": lambda: list(
                    pod_image_pull.detect(snapshot)
                ),
                "lesson detector, in process": lambda: list(module.detect(snapshot)),
                "lesson detector, one-shot sandbox (fresh interpreter per run)": lambda: (
                    run_sandboxed(path, snapshot)
                ),
                "lesson detector, persistent sandboxed worker (the monitor's path)": lambda: (
                    worker.run(path, fresh(snapshot))
                ),
                "3 lesson detectors, one worker, one evaluation (snapshot sent once)": three,
            }
            medians = {name: median_ms(fn) for name, fn in rows.items()}
            starts = worker.starts
    base = medians["built-in pod-image-pull, in process"]
    print(f"live snapshot: {len(list(snapshot))} objects; median of {RUNS} runs; "
          f"worker processes started: {starts}\n")  # fmt: skip
    print("| detector | median ms | ratio to built-in |\n|---|---:|---:|")
    for name, ms in medians.items():
        print(f"| {name} | {ms:.2f} | {ms / base:.0f} |")
    one_shot_ms = medians["lesson detector, one-shot sandbox (fresh interpreter per run)"]
    worker_ms = medians["lesson detector, persistent sandboxed worker (the monitor's path)"]
    print(f"\none-shot / worker: {one_shot_ms / worker_ms:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
