"""A real world for transactions: LocalForge over a git repo holding the example shop.

The "cluster" is an apply pipeline: whatever is on main is what runs, so the
live state is main's desired state and the detector oracle judges it. The
engine deploys a merged commit ``sync_delay_s`` after it lands. Used in-process
and by the crash-test subprocess (``python -m tests.transaction.e2e_world``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitmedic.bot.forges.local import LocalForge
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.reconciler.clock import FakeClock
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.oracles import DetectorOracle, MetricSpec
from gitmedic.reconciler.sync.state import SyncPhase, SyncState
from gitmedic.reconciler.transaction import Journal, MachineConfig, Plan, TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.gate import Gate
from gitmedic.reconciler.transaction.verify import OracleVerifier
from tests.support.stepping import settle

EXAMPLE = Path(__file__).parents[2] / "src/gitmedic/examples/shop"
APP = "apps/shop"
NAMESPACE = "shop"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Alice",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], env=ENV, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def baseline_repo(root: Path) -> Path:
    """The example shop in a new git repo, at a healthy baseline commit on main."""
    repo = root / "manifests"
    shutil.copytree(EXAMPLE, repo / APP)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "shop: baseline")
    return repo


def make_repo(root: Path) -> Path:
    """The shop at a healthy baseline, then a commit that breaks catalog's targetPort."""
    repo = baseline_repo(root)
    catalog = repo / APP / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace("targetPort: 3550", "targetPort: 3551", 1))
    git(repo, "commit", "-qam", "catalog: move to the new port")
    return repo


def snapshot_at(repo: Path, rev: str) -> Snapshot:
    state = load_desired(repo / APP, rev=rev, namespace=NAMESPACE)
    return Snapshot(list(state.snapshot), mode=Mode.LIVE)


def findings_at(repo: Path, rev: str) -> list[Finding]:
    return list(run_detectors(builtin_registry(), snapshot_at(repo, rev)).findings)


@dataclass
class ApplyEngine:
    """Deploys main's head ``delay`` seconds after it appears; ``never`` to hang."""

    repo: Path
    clock: FakeClock
    delay: float = 20.0
    never: bool = False
    first_seen: dict[str, float] = field(default_factory=dict)

    def check(self, sha: str) -> SyncState:
        seen = self.first_seen.setdefault(sha, self.clock.now())
        if self.never or self.clock.now() - seen < self.delay:
            return SyncState(SyncPhase.PROGRESSING, "applying", at=self.clock.now())
        return SyncState(SyncPhase.DEPLOYED, "applied", revision=sha, at=self.clock.now())

    def live(self) -> Snapshot:
        """main's desired state, plus a crash-looping pod for any image tagged ``-broken``:
        a runtime fault that no desired-state check can see, only the oracles."""
        desired = snapshot_at(self.repo, git(self.repo, "rev-parse", "main"))
        pods = [
            crashing_pod(w.obj.name, c.name)
            for w in desired.workloads()
            for c in w.containers()
            if str(c.body.get("image", "")).endswith("-broken")
        ]
        return Snapshot([*desired, *pods], mode=Mode.LIVE)


def ports(
    repo: Path,
    clock: FakeClock,
    *,
    never_sync: bool = False,
    describe_revert: Callable[[TxnState], str] | None = None,
) -> ForgePorts:
    forge = LocalForge(repo)
    engine = ApplyEngine(repo, clock, never=never_sync)
    detectors = list(builtin_registry())
    gate = Gate(lambda rev: load_desired(repo / APP, rev=rev, namespace=NAMESPACE), detectors)
    # No worse than before: a critical finding fails the window only if it is new.
    baseline = {f.fingerprint for f in findings_at(repo, "main") if f.severity.value == "critical"}
    spec = MetricSpec(
        interval=10,
        count=3,
        failure_limit=0,
        failure_condition=lambda r: bool(set(r["findings"]) - baseline),
    )
    verifier = OracleVerifier(
        lambda: [DetectorOracle(engine.live, detectors, spec=spec)],
        clock,
        lambda: list(run_detectors(detectors, engine.live()).findings),
    )
    return ForgePorts(
        forge,
        lambda file, rev: git(repo, "show", f"{rev}:{file}") + "\n",
        gate,
        engine,
        verifier,
        main_head=lambda: git(repo, "rev-parse", "main"),
        changed_files=lambda a, b: git(repo, "diff", "--name-only", a, b).splitlines(),
        app_path=APP,
        describe_revert=describe_revert,
    )


def crashing_pod(workload: str, container: str) -> Obj:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{workload}-7d9f8-x2x9q",
            "namespace": NAMESPACE,
            "labels": {"app": workload},
            "ownerReferences": [
                {"kind": "ReplicaSet", "name": f"{workload}-7d9f8", "controller": True}
            ],
        },
        "spec": {"containers": [{"name": container, "image": "x"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": container,
                    "ready": False,
                    "restartCount": 5,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 1}},
                }
            ],
        },
    }
    return Obj(Resource("Pod", NAMESPACE, body["metadata"]["name"]), body)


FIXES = {
    # the right fix: the targetPort back to what the container serves
    "good": [("spec.ports[0].targetPort", 3550, "Service")],
    # right in the manifests, wrong at runtime: the new image crashes
    "broken-image": [
        ("spec.ports[0].targetPort", 3550, "Service"),
        (
            "spec.template.spec.containers[name=server].image",
            "ghcr.io/gitmedic/shop-catalog:2.0.2-broken",
            "Deployment",
        ),
    ],
    # visibly wrong in the manifests: the gate refuses it
    "bad-selector": [("spec.selector.app", "catalogue", "Service")],
}


def plan(repo: Path, fix: str, *, mu_pre: float = 5.0) -> Plan:
    targets = tuple(
        f.fingerprint for f in findings_at(repo, "main") if f.detector == "service-target-port"
    )
    edits = tuple(
        {
            "file": f"{APP}/catalog.yaml",
            "op": "set",
            "path": path,
            "value": value,
            "resource": {"kind": kind, "namespace": NAMESPACE, "name": "catalog"},
        }
        for path, value, kind in FIXES[fix]
    )
    return Plan(
        txn_id=f"inc-1/{fix}",
        app="shop",
        incident="inc-1",
        attempt=1,
        strategy="playbook",
        branch=f"gitmedic/inc-1/catalog-{fix}",
        title="Restore catalog's targetPort",
        edits=edits,
        base_sha=git(repo, "rev-parse", "main"),
        mu_pre=mu_pre,
        targets=targets,
        auto_merge=True,
        body="Restores the targetPort.",
    )


CONFIG = MachineConfig(sync_timeout_s=300, poll_s=10)


def run(
    repo: Path,
    journal_path: Path,
    txn_plan: Plan,
    *,
    kill_after: int = 0,
    never_sync: bool = False,
    on_record: Callable[[TxnState], None] = lambda state: None,
    describe_revert: Callable[[TxnState], str] | None = None,
) -> TxnState:
    """Drive the transaction; with ``kill_after`` the process SIGKILLs itself after that record."""
    clock = FakeClock(1_000_000.0)
    journal = Journal(journal_path)
    journal.create(txn_plan, clock.now())

    def maybe_die(state: TxnState) -> None:
        on_record(state)
        if kill_after and len(state.records) == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    return settle(
        journal,
        txn_plan.txn_id,
        ports(repo, clock, never_sync=never_sync, describe_revert=describe_revert),
        clock,
        CONFIG,
        on_record=maybe_die,
    )


if __name__ == "__main__":
    repo_arg, journal_arg, port_arg, kill_arg = sys.argv[1:5]  # port_arg: a FIXES key
    repo_path = Path(repo_arg)
    plan_file = Path(journal_arg).with_suffix(".plan.json")
    if plan_file.exists():
        the_plan = Plan.from_json(json.loads(plan_file.read_text()))
    else:
        the_plan = plan(repo_path, port_arg)
        plan_file.write_text(json.dumps(the_plan.to_json()))
    final = run(repo_path, Path(journal_arg), the_plan, kill_after=int(kill_arg))
    print(json.dumps(final.to_json()))
