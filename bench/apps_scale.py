"""Benchmark: many apps in one gitmedic process (issue 26's acceptance), on the sim.

Part 1, ``run --once`` (the CLI, a fresh process per run): a repo of 20 web apps with a
critical fault committed into one (its Service's targetPort) against the same repo with
that one app. Runs alternate (1, 20, 1, 20, ...), each on a fresh copy of its repo;
reported per size: median wall time, median CPU (user + sys of the child), the
simulated time the run says it took, and the ratios 20/1. Target: <= 4x.

Part 2, one process watching ``--apps`` apps (default 1,000): ``serve``'s own assembly
(:func:`gitmedic.bot.service.wiring.wire`: a loop, live actions and journal per app, the
monitor step that steps each app and runs its sim for the interval), built in this
process, on the sim and the local forge. After ``--warm`` monitor steps, a fault is
committed into the middle app; the monitor steps on until that app's incident is open.
Reported: steps (monitor intervals) from the commit to the incident (target <= 2), the
time to build the apps, memory per app (peak RSS growth over building and stepping,
``ru_maxrss``, divided by the apps), and CPU and wall per monitor step (median of the
quiet steps, and the steps after the fault).

    PYTHONPATH=src:. .venv/bin/python bench/apps_scale.py [--runs 3] [--apps 1000] [--warm 3]
    [--skip-cli] [--skip-serve]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.bot.test_run_every_app import WEB, config

from gitmedic.sim.faults.git import commit_all, init_repo

BROKEN = "targetPort: 9090"


def make_repo(root: Path, names: list[str]) -> Path:
    repo = root / "repo"
    for i, name in enumerate(names):
        (repo / "apps" / name).mkdir(parents=True)
        (repo / "apps" / name / "web.yaml").write_text(WEB.format(ns=name, minor=i % 3))
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic" / "config.yaml").write_text(config(names))
    init_repo(repo)
    return repo


def break_app(repo: Path, name: str) -> str:
    file = repo / "apps" / name / "web.yaml"
    file.write_text(file.read_text().replace("targetPort: 8080", BROKEN))
    return commit_all(repo, f"{name}: the service's port")


# -- part 1: run --once, 20 apps against 1 --------------------------------------------


def run_once(template: Path, scratch: Path) -> tuple[float, float, float]:
    """(wall s, CPU s of the child, simulated s the run reports) of one fresh run."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(template, scratch, symlinks=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "run", str(scratch), "--once", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"run --once exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    (sim,) = re.findall(r"run --once took (\d+) s of the cluster's clock", proc.stderr)
    return wall, cpu, float(sim)


def part_cli(runs: int, work: Path) -> bool:
    templates = {}
    for apps in (1, 20):
        names = [f"app-{i:02}" for i in range(1, apps + 1)] if apps > 1 else ["app-11"]
        repo = make_repo(work / f"t{apps}", names)
        break_app(repo, "app-11")
        templates[apps] = repo
    rows: dict[int, list[tuple[float, float, float]]] = {1: [], 20: []}
    for _ in range(runs):
        for apps in (1, 20):
            rows[apps].append(run_once(templates[apps], work / f"run{apps}"))
    med = {
        apps: tuple(statistics.median(r[k] for r in rows[apps]) for k in range(3)) for apps in rows
    }
    print(f"run --once, median of {runs} (interleaved):")
    for apps in (1, 20):
        wall, cpu, sim = med[apps]
        print(f"  {apps:2} app(s): wall {wall:6.2f} s  CPU {cpu:6.2f} s  sim {sim:5.0f} s")
    ratios = [med[20][k] / med[1][k] for k in range(3)]
    print(f"  20/1: wall {ratios[0]:.2f}x  CPU {ratios[1]:.2f}x  sim {ratios[2]:.2f}x  (<= 4x)")
    return max(ratios) <= 4.0


# -- part 2: one process, --apps apps, serve's assembly --------------------------------


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def timed(step: Callable[[], None]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    step()
    return time.process_time() - cpu, time.perf_counter() - wall


def part_serve(apps: int, warm: int, work: Path) -> bool:
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.bot.service.settings import ServeSettings
    from gitmedic.bot.service.wiring import wire

    names = [f"app-{i:04}" for i in range(apps)]
    victim = names[apps // 2]
    repo = make_repo(work / "serve", names)
    interval = 60.0
    args = argparse.Namespace(
        forge="local", cluster="sim", interval=interval, path=None, namespace=None,
        watch=None, app=None,
    )  # fmt: skip
    settings = ServeSettings("bench-secret", work / "serve" / "state", repo)
    rss_before = rss_mib()
    began = time.perf_counter()
    served = wire(settings, args, {}, LocalForge(repo), repo, lambda: None)
    built = time.perf_counter() - began
    loop = next(lp for lp in served.loops if lp.config.app == victim)
    quiet = [timed(served.monitor.step_once) for _ in range(warm)]
    break_app(repo, victim)
    committed = loop.clock.now()  # the app's sim clock: the commit lands between two steps
    after: list[tuple[float, float]] = []
    while not loop.incidents.open and len(after) < 10:
        after.append(timed(served.monitor.step_once))
    rss_after = rss_mib()
    steps = len(after)
    opened_at = min((i.opened_at for i in loop.incidents.open.values()), default=float("inf"))
    intervals = (opened_at - committed) / interval
    print(f"one process, {apps} apps (serve's wire, sim, local forge, interval {interval:.0f} s):")
    print(f"  built in {built:.1f} s ({built / apps * 1000:.1f} ms per app)")
    opened = "opened" if loop.incidents.open else "NOT opened"
    print(
        f"  fault committed into {victim} between two steps: its incident {opened} "
        f"{intervals:.2f} monitor intervals later (at the {steps}th step since)"
    )
    print(
        f"  peak RSS {rss_before:.0f} -> {rss_after:.0f} MiB: "
        f"{(rss_after - rss_before) / apps * 1024:.0f} KiB per app"
    )

    def show(label: str, rows: list[tuple[float, float]]) -> None:
        cpu = statistics.median(r[0] for r in rows)
        wall = statistics.median(r[1] for r in rows)
        print(
            f"  {label}: CPU {cpu:.2f} s, wall {wall:.2f} s per monitor step"
            f" (median of {len(rows)})"
        )

    show("quiet steps", quiet)
    show("steps after the fault", after)
    return bool(loop.incidents.open) and intervals <= 2


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    ok = True
    with tempfile.TemporaryDirectory(prefix="gitmedic-apps-scale-") as tmp:
        if not args.skip_cli:
            ok &= part_cli(args.runs, Path(tmp))
        if not args.skip_serve:
            ok &= part_serve(args.apps, args.warm, Path(tmp))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
