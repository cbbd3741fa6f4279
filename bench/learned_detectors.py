"""Benchmark: what a learned rule costs the monitor, side by side with the built-in it refines.

A learned detector is a CEL rule (data, ``bot/memory/rule.py``), evaluated in
process under a cost bound; the lesson reflection writes (``pod-image-pull`` on a
container that also sets ``command``) refines the built-in, so it runs once per
built-in finding. Measured on live snapshots from the sim (catalog's image never
pushed, catalog setting ``command``): the bundled shop as it is, and the shop
copied into namespaces until the snapshot holds about 1,000 objects.

Rows, per evaluation (one snapshot, a new Snapshot object each run so no cache
carries over):

- the built-in ``pod-image-pull``;
- the rule alone, given the built-in's findings (what the monitor adds: the
  registry shares the built-in's findings with its refinements);
- the built-in and the rule through the runner, as the monitor runs them;
- the rule computing the built-in's findings itself (nothing shared).

Prints a Markdown table and the ratios to the built-in.

    .venv/bin/python bench/learned_detectors.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.memory.learned import load_learned
from gitmedic.bot.memory.lesson import Lesson, render_rule
from gitmedic.bot.memory.rule import compile_rule
from gitmedic.bot.memory.rule_detector import rule_detector, shared_findings
from gitmedic.bot.memory.templated import Context
from gitmedic.detectors.builtin import builtin_registry, pod_image_pull
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Obj, Snapshot
from gitmedic.detectors.spec import Detector

RUNS = 30
APP, NAMESPACE = "apps/shop", "shop"


def _git(repo: Path, *argv: str) -> str:
    ident = ["-c", "user.name=b", "-c", "user.email=b@example.com"]
    out = subprocess.run(
        ["git", "-C", str(repo), *ident, *argv], check=True, capture_output=True, text=True
    )
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
    catalog.write_text(
        text.replace(
            "    spec:\n      containers:\n        - name: server\n",
            "    spec:\n      containers:\n        - name: server\n"
            '          command: ["/catalog"]\n',
            1,
        )
    )
    _git(repo, "commit", "-qam", "release")
    cluster = SimCluster(repo, APP, NAMESPACE, baseline_rev=healthy)
    cluster.clock.sleep(60)
    return cluster.snapshot()


def lesson_rule() -> Detector:
    symptom = Finding(
        "pod-image-pull",
        "image-pull",
        Severity.CRITICAL,
        Resource("Deployment", NAMESPACE, "catalog"),
        "x",
        params={"container": "server"},
    )
    lesson = Lesson(symptom, ("image", "command"), ("command",), ("image",), ("pod-crashloop",))
    ctx = Context("bench", "bisect", "", "", (), "CRITICAL")
    rule = render_rule(lesson, "learned-bench", "bench", ctx)
    base = next(d for d in builtin_registry() if d.id == "pod-image-pull")
    return rule_detector(compile_rule(rule, ".gitmedic/rules/learned-bench.yaml"), base)


def scaled(snapshot: Snapshot, objects: int) -> Snapshot:
    """The snapshot copied into namespaces shop-1, shop-2, ... until it holds ``objects``."""
    out = list(snapshot)
    copy = 1
    while len(out) < objects:
        for obj in snapshot:
            text = json.dumps(obj.body).replace(f'"{NAMESPACE}"', f'"{NAMESPACE}-{copy}"')
            ref = Resource(obj.kind, f"{NAMESPACE}-{copy}", obj.name, obj.ref.api_version)
            out.append(Obj(ref, json.loads(text)))
        copy += 1
    return Snapshot(out, mode=snapshot.mode, taken_at=snapshot.taken_at)


def median_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def fresh(snapshot: Snapshot) -> Snapshot:
    """An equal snapshot, a new object: nothing computed on an earlier run is reused."""
    return Snapshot(list(snapshot), mode=snapshot.mode, taken_at=snapshot.taken_at)


def measure(snapshot: Snapshot, rule: Detector) -> dict[str, float]:
    base = next(d for d in builtin_registry() if d.id == "pod-image-pull")
    registry = load_learned(Path("/nonexistent"), [base]).registry  # nothing learned: base
    assert list(rule.detect(fresh(snapshot))), "the lesson must fire"

    def rule_given_findings() -> list[Finding]:
        snap = fresh(snapshot)
        shared_findings(snap, base)  # what the built-in left on the snapshot
        started = time.perf_counter()
        found = list(rule.detect(snap))
        timed.append(time.perf_counter() - started)
        return found

    timed: list[float] = []
    rows: dict[str, Callable[[], object]] = {
        "built-in pod-image-pull": lambda: list(pod_image_pull.detect(fresh(snapshot))),
        "built-in + rule through the runner (the monitor's path)": lambda: run_detectors(
            [*registry, rule], fresh(snapshot)
        ),
        "rule computing the built-in's findings itself": lambda: list(rule.detect(fresh(snapshot))),
    }
    medians = {name: median_ms(fn) for name, fn in rows.items()}
    for _ in range(RUNS):
        rule_given_findings()
    medians["rule alone, the built-in's findings shared"] = statistics.median(timed) * 1000
    return medians


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="gitmedic-bench-") as scratch:
        shop = live_snapshot(Path(scratch))
    rule = lesson_rule()
    for snapshot in (shop, scaled(shop, 1000)):
        medians = measure(snapshot, rule)
        base = medians["built-in pod-image-pull"]
        print(f"\nlive snapshot: {len(snapshot)} objects; median of {RUNS} runs\n")
        print("| detector | median ms | ratio to built-in |\n|---|---:|---:|")
        for name, ms in medians.items():
            print(f"| {name} | {ms:.3f} | {ms / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
