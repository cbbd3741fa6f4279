"""From a proposal to a transaction: policy input, PR body, Plan, and the ports over a forge.

``change_summary`` describes a proposal for the policy (strategy, detectors,
playbook, fields, files, kinds, namespaces, whether an image is new), the policy
decides, and the PR body renders the proposal with that decision. ``plan_of``
turns it into the transaction's Plan: a deterministic branch
``gitmedic/<incident>/attempt-<n>`` (a restart finds the same PR again) and the
fingerprints the change must clear.

``build_ports`` wires :class:`ForgePorts` for one app: the gate loads the app's
desired state at a revision, the watcher is the cluster's, and the verifier runs
the app's combined oracles (:mod:`gitmedic.bot.controller.checks`: cluster state,
alerts, HTTP probes, detectors), each with the "no worse than before" condition
against its reading when the checks were built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from gitmedic.bot.controller.checks import AlertFeed, Checks
from gitmedic.bot.controller.rollouts import held_back
from gitmedic.bot.controller.targets import fix_targets
from gitmedic.bot.policy.decide import ChangeSummary, Decision, decide
from gitmedic.bot.render.changes import Reader, field_changes
from gitmedic.bot.render.pr_body import (
    IntroducingCommit,
    PrBodyInput,
    VerificationPlan,
    render_pr_body,
)
from gitmedic.bot.render.retry_note import retry_section
from gitmedic.bot.render.revert_body import revert_body
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.detectors.finding import Finding
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.clock import Clock
from gitmedic.reconciler.config import PolicyConfig, ProbeConfig
from gitmedic.reconciler.forge import Forge
from gitmedic.reconciler.git import Git, GitError, SymlinkRefused, UnknownRevision
from gitmedic.reconciler.manifests.edit import Op
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.reconciler.oracles import FiringAlert
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.reconciler.transaction import Plan, TxnState
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


def change_summary(proposal: Proposal, incident: Incident) -> ChangeSummary:
    edits = proposal.edits
    set_fields = tuple(".".join(map(str, e.path)) for e in edits if e.op is not Op.REMOVE)
    removed = tuple(".".join(map(str, e.path)) for e in edits if e.op is Op.REMOVE)
    return ChangeSummary(
        strategy=proposal.strategy,
        detectors=tuple(sorted({f.detector for f in incident.findings})),
        playbooks=(proposal.playbook,) if proposal.playbook else (),
        fields=set_fields,
        removed_fields=removed,
        files=tuple(sorted({e.file for e in edits})),
        changed_lines=len(edits),
        namespaces=tuple(sorted({e.resource.namespace for e in edits})),
        kinds=tuple(sorted({e.resource.kind for e in edits})),
        deletes_object=any(e.op is Op.REMOVE_OBJECT for e in edits),
        llm_authored=proposal.strategy == "llm",
        alternatives=len(proposal.alternatives),
    )


def decision_for(
    proposal: Proposal, incident: Incident, policy: PolicyConfig, now: float
) -> Decision:
    summary = change_summary(proposal, incident)
    return decide(summary, policy, datetime.fromtimestamp(now, tz=UTC))


def plan_of(
    proposal: Proposal,
    incident: Incident,
    *,
    attempt: int,
    base_sha: str,
    mu_pre: float,
    decision: Decision,
    body: str,
    feedback: Sequence[str],
    baselines: Mapping[str, Mapping[str, int] | None] | None = None,
    firing: frozenset[str] = frozenset(),
    revert_auto_merge: bool = True,
    preexisting: frozenset[str] = frozenset(),
) -> Plan:
    """``preexisting``: fingerprints of findings the app had before its fault
    (:func:`~gitmedic.bot.controller.targets.preexisting`), which are no targets of the fix."""
    return Plan(
        txn_id=f"{incident.id}/attempt-{attempt}",
        app=incident.app,
        incident=incident.id,
        attempt=attempt,
        strategy=proposal.strategy,
        branch=f"gitmedic/{incident.id}/attempt-{attempt}",
        title=title_of(proposal, incident),
        edits=tuple(e.to_json() for e in proposal.edits),
        base_sha=base_sha,
        mu_pre=mu_pre,
        targets=fix_targets(incident, preexisting),
        auto_merge=decision.auto_merge,
        body=body,
        feedback=tuple(feedback),
        tokens=proposal.tokens,
        baselines=dict(baselines or {}),
        firing=tuple(sorted(firing)),
        playbook=proposal.playbook or "",
        proposal=proposal.to_json(),
        revert_auto_merge=revert_auto_merge,
    )


def title_of(proposal: Proposal, incident: Incident) -> str:
    first = (incident.active or incident.findings)[0]
    objects = sorted({str(e.resource) for e in proposal.edits})
    where = objects[0] if len(objects) == 1 else f"{len(objects)} objects"
    return f"fix({incident.app}): {first.detector} on {where}"


def pr_body(
    proposal: Proposal,
    incident: Incident,
    decision: Decision,
    plan: VerificationPlan,
    read: Reader = lambda file: None,
    follows: TxnState | None = None,
) -> str:
    """``read``: a file at the PR's base (:func:`base_reader`), the "before" of the table;
    ``follows``: the undone attempt a retry follows, linked with what was found on it."""
    commit = proposal.commit
    data = PrBodyInput(
        incident=incident.id,
        app=incident.app,
        summary=proposal.diagnosis.splitlines()[0] if proposal.diagnosis else incident.id,
        findings=incident.active or incident.findings,
        diagnosis=proposal.diagnosis,
        strategy=proposal.strategy,
        decision=decision,
        plan=plan,
        fields=field_changes(proposal.edits, read),
        follows=retry_section(follows) if follows is not None else "",
        playbook=proposal.playbook,
        commit=IntroducingCommit(commit.sha, commit.author, commit.subject) if commit else None,
        tokens=proposal.tokens,
        changes=tuple(e.describe() for e in proposal.edits),
    )
    return render_pr_body(data).text


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
