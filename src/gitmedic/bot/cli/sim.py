"""``gitmedic sim status``: what the simulated cluster shows with PATH deployed at REV.

Its registry and catalogue are learned as the loop's sim learns them for the same app
(:mod:`gitmedic.bot.cli.sim_learned`): the verified-healthy revisions in the repository's
journal, or the configured known-good; stderr names which."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gitmedic.bot.cli.sim_learned import learned_catalog
from gitmedic.bot.common.exits import EXIT_OK, UsageError
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.config import CONFIG_PATH
from gitmedic.reconciler.manifests.load import LoadFailure, load_desired
from gitmedic.sim.engine import StaticSource
from gitmedic.sim.health import Status, health_of
from gitmedic.sim.runtime import Sim, SimState
from gitmedic.sim.stamps import EPOCH


def run_sim_status(args: argparse.Namespace) -> int:
    path, namespace, deployer = _deployed(args)
    try:
        state = load_desired(path, rev=args.rev, namespace=namespace, deployer=deployer)
    except LoadFailure as exc:
        raise UsageError(str(exc)) from None
    if state.errors:
        first = state.errors[0]
        raise UsageError(f"{first.file}:{first.line}: {first.message}")
    if args.seconds < 0:
        raise UsageError(f"--seconds must be >= 0, not {args.seconds}")
    try:
        catalog, learned = learned_catalog(
            path, args.rev, namespace, state.snapshot, list(args.allow_image), deployer
        )
    except ValueError as exc:
        raise UsageError(f"{CONFIG_PATH}: {exc}") from None
    # which images run is learned as the loop learns it; said, since it decides pull failures
    print(f"gitmedic: sim status: images learned from {learned}", file=sys.stderr)
    revision = state.snapshot.revision or "working-tree"
    sim = Sim(
        StaticSource(state.snapshot, revision),
        catalog,
        FakeClock(EPOCH),
        seed=args.seed,
        name=path.resolve().name,
        namespace=namespace,
    )
    result = sim.run(args.seconds, step_s=10.0)
    if args.json:
        print(json.dumps(result.to_json(), indent=1, sort_keys=True))
    else:
        print(render(result))
    return EXIT_OK


def _deployed(args: argparse.Namespace) -> tuple[Path, str, str]:
    """What to deploy: PATH in ``--namespace``; with ``--app``, that app of the config of
    the repository holding PATH (its folder, namespace and release)."""
    from gitmedic.reconciler.config import ConfigError
    from gitmedic.reconciler.manifests.apps import repo_config, repo_root

    if not getattr(args, "app", None):
        return Path(args.path), args.namespace or "default", ""
    try:
        config = repo_config(args.path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    apps = config.apps if config is not None else ()
    found = [a for a in apps if a.name == args.app]
    if not found:
        known = ", ".join(a.name for a in apps) or "none"
        raise UsageError(f"--app {args.app}: {CONFIG_PATH} has no such app (its apps: {known})")
    app = found[0]
    root = repo_root(Path(args.path).absolute())
    return root / app.path, args.namespace or app.namespace, app.deployer


def render(state: SimState) -> str:
    app = state.application["status"]
    lines = [
        f"application: sync {app['sync']['status']} at {app['sync']['revision'][:12]}, "
        f"health {app['health']['status']}",
        "",
        "workloads:",
    ]
    for body in state.observed.objects:
        if body["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
            status, message = health_of(body)
            s = body.get("status", {})
            ready = s.get("readyReplicas", s.get("numberReady", 0))
            want = body.get("spec", {}).get("replicas", s.get("desiredNumberScheduled", 1))
            note = f"  ({message})" if message and status is not Status.HEALTHY else ""
            lines.append(
                f"  {body['kind']:<11} {body['metadata']['name']:<40} {ready}/{want}"
                f"  {status.value}{note}"
            )
    problems = [p for p in state.observed.pods if not p.ready]
    if problems:
        lines += ["", "pods not ready:"]
        for p in problems:
            lines.append(f"  {p.body['metadata']['name']:<52} {_pod_reason(p.body)}")
    lines += ["", "entry points:"]
    for key, r in sorted(state.traffic.entrypoints.items()):
        why = f"  ({r.why})" if r.why else ""
        lines.append(f"  {key:<45} {r.success_rate:>7.1%}  {r.latency_ms:>7.1f} ms{why}")
    lines += ["", f"alerts firing: {len(state.alerts)}"]
    lines += [
        f"  {a['labels']['alertname']}: {a['annotations'].get('description', '')}"
        for a in state.alerts
    ]
    return "\n".join(lines)


def _pod_reason(pod: dict[str, object]) -> str:
    status = pod.get("status")
    assert isinstance(status, dict)
    for cs in status.get("initContainerStatuses", []) + status.get("containerStatuses", []):
        waiting = cs.get("state", {}).get("waiting")
        if waiting and waiting.get("reason") != "PodInitializing":
            return f"{cs['name']}: {waiting['reason']}"
        if cs.get("state", {}).get("running") and not cs.get("ready"):
            return f"{cs['name']}: running, not ready"
    for cond in status.get("conditions", []):
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return f"Pending: {cond.get('message', '')}"
    return str(status.get("phase", ""))
