"""What a fix must clear: the incident's findings, less those the app had before its fault.

A chart or base often carries a finding its team lives with (podinfo's chart
allows its one pod down on every rollout). It fires with every incident of the
app, so as a target it made the gate refuse, and verification revert, every fix:
no restore of a values key can clear a finding written in a template. A
finding the desired state has had all along (at the app's first commit, and
still just before the change the fix undoes: the parent of the commit that
bisect or the playbook found) is no target of this fix: the fix restores that
state, finding included. Both are asked so that, of two faults in two commits,
the earlier one's finding stays a target of a fix for the later one. It still counts
against the fix in the gate whenever the candidate worsens it (a new
fingerprint, or a higher severity, is a new finding there).

Only a proposal that names its introducing commit is judged so; an LLM
proposal, a fault with no history, or a desired state that does not load at
either revision keeps every finding as a target. Nor is a target dropped when that
would leave none: a fix with nothing to clear would pass the gate on no
evidence at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.detectors.finding import Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.manifests.load import load_desired

__all__ = ["fix_targets", "preexisting"]


def fix_targets(incident: Incident, preexisting: frozenset[str]) -> tuple[str, ...]:
    """Fingerprints the fix must clear: the incident's active findings above info, less
    the ones present before its fault (unless that leaves none)."""
    every = tuple(f.fingerprint for f in incident.active if f.severity is not Severity.INFO)
    caused = tuple(fp for fp in every if fp not in preexisting)
    return caused or every


def preexisting(
    repo: Path,
    app_path: str,
    namespace: str,
    detectors: Sequence[Detector],
    proposal: Proposal,
    deployer: str = "",
) -> frozenset[str]:
    """Fingerprints of the desired state's findings both just before the proposal's
    introducing commit and at the app's first commit: what the app has had all along."""
    if proposal.commit is None:
        return frozenset()
    sha = proposal.commit.sha
    before = _rev(repo, "rev-parse", "--verify", "--quiet", f"{sha}^")
    first = _rev(repo, "log", "--reverse", "--format=%H", sha, "--", app_path or ".")
    if not before or not first:
        return frozenset()  # the first commit: nothing came before it
    app = (repo, app_path, namespace, deployer)
    return _findings(app, detectors, before) & _findings(app, detectors, first.split()[0])


def _rev(repo: Path, *args: str) -> str:
    found = gitcmd.run(repo, *args)
    return found.stdout.strip() if found.returncode == 0 else ""


def _findings(
    app: tuple[Path, str, str, str], detectors: Sequence[Detector], rev: str
) -> frozenset[str]:
    repo, app_path, namespace, deployer = app
    where = repo / app_path if app_path else repo
    state = load_desired(where, rev=rev, namespace=namespace, deployer=deployer)
    if state.errors:
        return frozenset()  # what did not load cannot vouch for anything
    return frozenset(f.fingerprint for f in run_detectors(detectors, state.snapshot).findings)
