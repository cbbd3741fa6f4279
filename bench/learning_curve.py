"""Learning curve: the same fault class on a first and a second object, with and without memory.

Two classes. ``release``, the demo's story (b)/(c) on real apps: a release lands as two
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
resolution (incident opened -> resolved), attempts, strategies, reverts,
approvals and tokens. ``release`` never reaches the model (playbook, bisect and
the learned playbook answer it), so its tokens are 0 in both modes.

``latent-entrypoint`` is the class no playbook covers (:mod:`learning_llm`): an
entrypoint committed a month before it rolls out, answered by a scripted model
(no network) whose usage is counted from what the loop really sends it.

``secret-env``: one commit adds an env var whose ``secretKeyRef`` names a Secret
nobody created; the pods cannot be created (``pod-config-error``), and the live
blame restores the commit's variable (bisect, no model).

    .venv/bin/python bench/learning_curve.py [--apps online-boutique,...]
        [--classes release,latent-entrypoint,secret-env] [--json]
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

from learning_llm import LATENT, ScriptedModel, inject_latent

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "tests" / "fixtures" / "data" / "apps"
# app -> (the first object, the second object): Deployments others call
OBJECTS = {
    "online-boutique": ("productcatalogservice", "currencyservice"),
    "sock-shop": ("carts", "orders"),
    "hotel-reservation": ("profile", "rate"),
}


CLASSES = ("release", "latent-entrypoint", "secret-env")


@dataclass(frozen=True)
class Occurrence:
    fault_class: str
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
    approvals: int  # PRs a person approved (the benchmark's person approves at once)
    tokens: int


@dataclass(frozen=True)
class Scene:
    """One app's repo in a temporary folder, and where its manifests are."""

    tmp: Path
    repo: Path
    app: str
    path: str
    namespace: str


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(OBJECTS))
    parser.add_argument("--classes", default=",".join(CLASSES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [
        occ
        for fault_class in args.classes.split(",")
        for app in args.apps.split(",")
        for memory in (True, False)
        for occ in run_app(app, fault_class, memory=memory)
    ]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(table(rows))
    return 0


def run_app(app: str, fault_class: str, *, memory: bool) -> list[Occurrence]:
    if fault_class not in CLASSES:
        raise SystemExit(f"unknown class {fault_class!r}; known: {', '.join(CLASSES)}")
    targets = LATENT[app][:2] if fault_class == "latent-entrypoint" else OBJECTS[app]
    with tempfile.TemporaryDirectory(prefix=f"lc-{app}-") as tmp:
        repo, path, namespace = _repo(Path(tmp), app)
        scene = Scene(Path(tmp), repo, app, path, namespace)
        out = []
        for n, target in enumerate(targets, start=1):
            if n == 2 and not memory:
                _forget(scene.repo)
            out.append(_occurrence(scene, fault_class, n, target, memory))
        return out


def _inject(scene: Scene, fault_class: str, n: int, target: str) -> ScriptedModel | None:
    """The occurrence's commits; the scripted model for the class that needs one."""
    if fault_class == "release":
        _release(scene.repo, scene.path, scene.namespace, target)
        return None
    if fault_class == "secret-env":
        _secret_env(scene.repo, scene.path, scene.namespace, target)
        return None
    benign = LATENT[scene.app][2]
    return inject_latent(scene.repo, scene.path, scene.namespace, target, benign, n)


def _occurrence(scene: Scene, fault_class: str, n: int, target: str, memory: bool) -> Occurrence:
    from gitmedic.bot.controller.loop import Loop, LoopConfig
    from gitmedic.bot.controller.sim_cluster import SimCluster
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.bot.memory.learned import load_learned
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.config import DEFAULT_POLICY, LlmConfig
    from gitmedic.reconciler.transaction import Journal

    healthy_rev = _git(scene.repo, "rev-parse", "HEAD")
    model = _inject(scene, fault_class, n, target)
    started = time.perf_counter()
    cluster = SimCluster(scene.repo, scene.path, scene.namespace, known_good=(healthy_rev,))
    llm = LlmConfig(model="openai/scripted", max_steps=10) if model is not None else None
    config = LoopConfig(
        scene.app, scene.repo, scene.path, scene.namespace, policy=DEFAULT_POLICY, llm=llm
    )
    learned = load_learned(scene.repo, builtin_registry())
    journal = Journal(scene.tmp / f"journal-{fault_class}-{n}.sqlite")
    forge = LocalForge(scene.repo)
    loop = Loop(config, cluster, forge, journal, list(learned.registry), completion=model)
    try:
        healthy, approvals = _run(loop)
    finally:
        loop.lease.release()
    wall = time.perf_counter() - started
    reports = list(loop.reports.values())
    txns = [t for r in reports for t in r.transactions]
    resolved = [r.resolved_at - r.incident.opened_at for r in reports if r.resolved_at]
    return Occurrence(
        fault_class=fault_class,
        app=scene.app,
        memory=memory,
        n=n,
        target=target,
        healthy=healthy,
        wall_s=round(wall, 1),
        sim_resolution_s=round(max(resolved), 1) if resolved else None,
        attempts=len(txns),
        strategies=tuple(t.plan.strategy for t in txns),
        reverts=sum(1 for t in txns if t.revert_pr),
        approvals=approvals,
        tokens=sum(t.plan.tokens for t in txns),
    )


def _run(loop: Any, max_approvals: int = 3) -> tuple[bool, int]:
    """``run_once``; a PR waiting for a person is approved at once and the run carries on."""
    from gitmedic.reconciler.transaction import Phase
    from gitmedic.reconciler.transaction.forge_ports import APPROVED_LABEL

    healthy, approvals = loop.run_once(), 0
    while not healthy and approvals < max_approvals:
        waiting = [
            t.pr
            for t in loop.journal.transactions()
            if t.phase is Phase.AWAITING_APPROVAL and t.pr is not None
        ]
        if not waiting:
            break
        for pr in waiting:
            loop.forge.add_labels(pr, [APPROVED_LABEL])
        approvals += len(waiting)
        healthy = loop.run_once()
    return healthy, approvals


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
        # a tag of its own: hotel-reservation's services share one image, and a tag the
        # first occurrence named is in the registry's history (the sim would pull it)
        first["image"] = str(first["image"]).rsplit(":", 1)[0] + f":9.9.9-{target}-unpushed"

    for change, message in ((entrypoint, "the gRPC entrypoint"), (unpushed, "release 9.9.9")):
        wl = workload(load_desired(repo / path, namespace=ns).snapshot, target)
        ed.edit(repo, wl.obj, change)
        commit_all(repo, f"{target}: {message}")


def _secret_env(repo: Path, path: str, ns: str, target: str) -> None:
    """One commit: an env var whose secretKeyRef names a Secret nobody created."""
    from gitmedic.reconciler.manifests.load import load_desired
    from gitmedic.sim.faults import edit as ed
    from gitmedic.sim.faults.git import commit_all
    from gitmedic.sim.faults.targets import workload

    ref = {"secretKeyRef": {"name": f"{target}-db", "key": "password"}}

    def database(doc: Any) -> None:
        ed.containers(doc)[0].setdefault("env", []).append(
            {"name": "DB_PASSWORD", "valueFrom": ref}
        )

    wl = workload(load_desired(repo / path, namespace=ns).snapshot, target)
    ed.edit(repo, wl.obj, database)
    commit_all(repo, f"{target}: database credentials")


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
        "| class | app | memory | # | object | healthy | wall s | sim s to resolve | attempts "
        "| strategies | reverts | approvals | tokens |",
        "|---|---|---|---:|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.fault_class} | {r.app} | {'on' if r.memory else 'off'} | {r.n} | {r.target} "
            f"| {r.healthy} | {r.wall_s} | {r.sim_resolution_s} | {r.attempts} "
            f"| {', '.join(r.strategies)} | {r.reverts} | {r.approvals} | {r.tokens} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
