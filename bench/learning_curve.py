"""Learning curve: the same fault class on a first and a second object, with and without memory.

The class is the demo's story (b)/(c) on real apps: a release lands as two
commits on one Deployment, a new entrypoint (``command``) and then a bump to an
image tag that was never pushed. Restoring the image alone (the built-in
``pod-image-pull`` answer) crash-loops, because the old image cannot run the new
entrypoint; the transaction reverts it and the retry restores both. Reflection
then writes a learned rule and playbook to the repo, so the same class on a
second Deployment can be fixed at the first attempt.

For each app the two occurrences run in sequence in one repo, each as one
``Loop.run_once`` on a fresh sim whose known-good is the revision before the
occurrence (what the cluster ran healthy). "memory off" is the same run with
``.gitmedic/`` removed from main before the second occurrence (a commit), so it
meets the class as new. Recorded per occurrence: wall time, simulated time to
resolution (incident opened -> resolved), attempts, strategies, reverts and
tokens. No LLM is configured: this class never reaches one (playbook, bisect
and learned playbook all answer it), so its tokens are 0 in both modes.

    .venv/bin/python bench/learning_curve.py [--apps online-boutique,...] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "data" / "apps"
# app -> (the first object, the second object): Deployments others call
OBJECTS = {
    "online-boutique": ("productcatalogservice", "currencyservice"),
    "sock-shop": ("carts", "orders"),
    "hotel-reservation": ("profile", "rate"),
}


@dataclass(frozen=True)
class Occurrence:
    app: str
    memory: bool
    n: int
    target: str
    healthy: bool
    wall_s: float
    sim_resolution_s: float | None
    attempts: int
    strategies: tuple[str, ...]
    reverts: int
    tokens: int


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(OBJECTS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [
        occ
        for app in args.apps.split(",")
        for memory in (True, False)
        for occ in run_app(app, memory=memory)
    ]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(table(rows))
    return 0


def run_app(app: str, *, memory: bool) -> list[Occurrence]:
    with tempfile.TemporaryDirectory(prefix=f"lc-{app}-") as tmp:
        repo, path, namespace = _repo(Path(tmp), app)
        out = []
        for n, target in enumerate(OBJECTS[app], start=1):
            if n == 2 and not memory:
                _forget(repo)
            out.append(_occurrence(repo, Path(tmp), app, path, namespace, n, target, memory))
        return out


def _occurrence(
    repo: Path, tmp: Path, app: str, path: str, ns: str, n: int, target: str, memory: bool
) -> Occurrence:
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.bot.loop.loop import Loop, LoopConfig
    from gitmedic.bot.loop.sim_cluster import SimCluster
    from gitmedic.bot.memory.learned import load_learned
    from gitmedic.bot.run_cmd import DEFAULT_POLICY
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.transaction import Journal

    healthy_rev = _git(repo, "rev-parse", "HEAD")
    _release(repo, path, ns, target)
    started = time.perf_counter()
    cluster = SimCluster(repo, path, ns, known_good=(healthy_rev,))
    config = LoopConfig(app, repo, path, ns, policy=DEFAULT_POLICY)
    learned = load_learned(repo, builtin_registry())
    journal = Journal(tmp / f"journal-{n}.sqlite")
    loop = Loop(config, cluster, LocalForge(repo), journal, list(learned.registry))
    try:
        healthy = loop.run_once()
    finally:
        loop.lease.release()
    wall = time.perf_counter() - started
    reports = list(loop.reports.values())
    txns = [t for r in reports for t in r.transactions]
    resolved = [r.resolved_at - r.incident.opened_at for r in reports if r.resolved_at]
    return Occurrence(
        app=app,
        memory=memory,
        n=n,
        target=target,
        healthy=healthy,
        wall_s=round(wall, 1),
        sim_resolution_s=round(max(resolved), 1) if resolved else None,
        attempts=len(txns),
        strategies=tuple(t.plan.strategy for t in txns),
        reverts=sum(1 for t in txns if t.revert_pr),
        tokens=sum(t.plan.tokens for t in txns),
    )


def _release(repo: Path, path: str, ns: str, target: str) -> None:
    """The two commits: a new entrypoint, then a tag that was never pushed."""
    from gitmedic.reconciler.manifests.load import load_desired
    from gitmedic.sim.faults import edit as ed
    from gitmedic.sim.faults.git import commit_all
    from gitmedic.sim.faults.targets import workload

    def entrypoint(doc: Any) -> None:
        ed.containers(doc)[0]["command"] = [f"/{target}", "serve", "--grpc"]

    def unpushed(doc: Any) -> None:
        first = ed.containers(doc)[0]
        first["image"] = str(first["image"]).rsplit(":", 1)[0] + ":9.9.9-never-pushed"

    for change, message in ((entrypoint, "the gRPC entrypoint"), (unpushed, "release 9.9.9")):
        wl = workload(load_desired(repo / path, namespace=ns).snapshot, target)
        ed.edit(repo, wl.obj, change)
        commit_all(repo, f"{target}: {message}")


def _forget(repo: Path) -> None:
    if (repo / ".gitmedic").exists():
        shutil.rmtree(repo / ".gitmedic")
        _git(repo, "commit", "-qam", "memory disabled: .gitmedic/ removed")


def _repo(tmp: Path, app: str) -> tuple[Path, str, str]:
    from gitmedic.sim.faults.git import init_repo

    entry = yaml.safe_load((APPS / "INDEX.yaml").read_text())[app]
    repo, src = tmp / "repo", APPS / app / entry["path"]
    dst = repo / "apps" / app / src.name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        dst.parent.mkdir(parents=True)
        shutil.copy(src, dst)
    init_repo(repo)
    return repo, f"apps/{app}", entry["namespace"]


def _git(repo: Path, *args: str) -> str:
    from gitmedic.reconciler import gitcmd

    return gitcmd.output(repo, *args)


def table(rows: list[Occurrence]) -> str:
    lines = [
        "| app | memory | # | object | healthy | wall s | sim s to resolve | attempts "
        "| strategies | reverts | tokens |",
        "|---|---|---:|---|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.app} | {'on' if r.memory else 'off'} | {r.n} | {r.target} | {r.healthy} "
            f"| {r.wall_s} | {r.sim_resolution_s} | {r.attempts} | {', '.join(r.strategies)} "
            f"| {r.reverts} | {r.tokens} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
