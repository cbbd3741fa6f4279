"""The ports over a forge and the cluster a transaction steps through.

A fix's plan (policy input, PR body, Plan) is the fix kind's
(:mod:`gitmedic.bot.transactions.fix`).

``build_ports`` wires :class:`ForgePorts` for one app: the gate loads the app's
desired state at a revision, the watcher is the cluster's, and the verifier runs
the app's combined oracles (:mod:`gitmedic.bot.controller.checks`: cluster state,
alerts, HTTP probes, detectors), each with the "no worse than before" condition
against its reading when the checks were built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from gitmedic.bot.controller.checks import AlertFeed, Checks
from gitmedic.bot.controller.rollouts import held_back
from gitmedic.bot.render.changes import Reader
from gitmedic.bot.render.revert_body import revert_body
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.config import ProbeConfig
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.git import Git, GitError, SymlinkRefused, UnknownRevision
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.oracles import FiringAlert
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.reconciler.transaction import TxnState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.gate import Gate
from gitmedic.reconciler.transaction.signals import critical_signals
from gitmedic.reconciler.transaction.verify import OracleVerifier
from gitmedic.reconciler.transaction.window import Signal


class Cluster(Protocol):
    """What the loop reads of a cluster and its GitOps engine (the sim, or a live one)."""

    @property
    def engine_name(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    def snapshot(self) -> Snapshot: ...

    def alerts(self) -> list[dict[str, object]]: ...

    def alerts_oracle(self) -> AlertFeed | None: ...

    def probe_oracle(self, probe: ProbeConfig) -> AlertFeed | None:
        """The cluster's own reading of a configured probe; None: a real HTTP GET."""
        ...

    def check(self, sha: str) -> SyncState: ...


def build_ports(
    repo: Path,
    app_path: str,
    namespace: str,
    forge: Forge,
    cluster: Cluster,
    detectors: Sequence[Detector],
    checks: Checks,
    *,
    announced: Callable[[TxnState], None] = lambda state: None,
    deployer: str = "",
) -> ForgePorts:
    """``deployer``: the app is this release at ``app_path``; the gate renders it alone."""
    where = repo / app_path if app_path else repo
    gate = Gate(
        lambda rev: load_desired(where, rev=rev, namespace=namespace, deployer=deployer),
        detectors,
    )
    verifier = OracleVerifier(
        lambda: checks.oracles,
        cluster.clock,
        lambda: live_findings(cluster, detectors),
        signals=lambda findings: counted_signals(cluster, findings),
    )
    return ForgePorts(
        forge,
        _reader(repo),
        gate,
        cluster,
        verifier,
        main_head=lambda: git(repo, "rev-parse", forge.default_branch()),
        # someone else's change to the app during verification: no verdict on ours
        changed_files=lambda a, b: git(repo, "diff", "--name-only", a, b).splitlines(),
        app_path=app_path,
        announced=announced,
        describe_revert=revert_body,
    )


class DetectorFailure(RuntimeError):
    """A detector failed on the live snapshot: what fires now is unknown, not "nothing"."""


def live_findings(cluster: Cluster, detectors: Sequence[Detector]) -> list[Finding]:
    """What the detectors find on the cluster now: the window's and the checkpoint's reading.

    A detector that fails raises :class:`DetectorFailure`: a checkpoint or measurement
    missing its findings would call a fault absent (a target "cleared", a regression
    unseen), so the step fails instead, loudly (``serve`` logs it and steps again later).
    """
    evaluation = run_detectors(detectors, cluster.snapshot())
    if evaluation.errors:
        raise DetectorFailure("; ".join(evaluation.problems()))
    return list(evaluation.findings)


def counted_signals(cluster: Cluster, findings: Sequence[Finding]) -> tuple[Signal, ...]:
    """The critical signals fail fast counts now. A fix that changes a pod template starts a
    rollout: until its new pods are Ready the Service has no endpoint and the Deployment is
    short of replicas, findings "caused by the change" on what it changed. The monitor holds
    exactly those back while the rollout is within its progress deadline
    (:func:`~gitmedic.bot.controller.rollouts.held_back`); fail fast must too, or the start-up
    itself undoes the fix (a relabelled workload's restored labels were reverted during
    the sync wait). Past the deadline, or with a pod failing, they count again."""
    snapshot = cluster.snapshot()
    counted, _ = held_back(findings, snapshot)
    return critical_signals(snapshot, counted, firing_alerts(cluster.alerts_oracle()))


def firing_alerts(feed: AlertFeed | None) -> tuple[FiringAlert, ...]:
    """The alerts firing now, for fail fast; none when there is no source or it cannot be
    read (the window's alerts oracle tells that as an Error of its own)."""
    if feed is None:
        return ()
    try:
        return feed.measure().observation.alerts
    except Exception:  # an unreadable source is no signal, never a crash of the step
        return ()
    finally:
        close = getattr(feed, "close", None)
        if callable(close):
            close()


def _reader(repo: Path) -> Callable[[str, str], str]:
    def read(file: str, rev: str) -> str:
        # through Git.show_file: a symbolic link at ``rev`` is refused, not read
        return Git(repo).show_file(rev, file).decode("utf-8").strip() + "\n"

    return read


def base_reader(repo: Path, rev: str) -> Reader:
    """A file's text at ``rev``; None when it is not there, ValueError when it cannot be
    read (a symbolic link, bad UTF-8), so the table says why instead of showing nothing."""

    def read(file: str) -> str | None:
        try:
            return Git(repo).show_file(rev, file).decode("utf-8")
        except SymlinkRefused as exc:
            raise ValueError(str(exc)) from None
        except UnknownRevision:
            return None
        except GitError as exc:
            raise ValueError(str(exc)) from None

    return read


def git(repo: Path, *args: str) -> str:
    return gitcmd.output(repo, args[0], *args[1:])
