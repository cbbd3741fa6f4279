"""Incidents made of several changes: two faults in one commit, two commits, noisy commits.

Each takes an app checked out in a git repo (``repo``, with the manifests under
``path``), applies the changes and commits, returning the commits in order with
what each injected. The snapshot is reloaded between steps so the second change
edits the file as the first left it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import MANIFEST_FAULTS
from gitmedic.sim.faults.git import commit_all
from gitmedic.sim.faults.targets import Injection

Change = Callable[[Path, Snapshot], Injection]


@dataclass(frozen=True)
class Commit:
    sha: str
    injections: tuple[Injection, ...]


def fault(fault_id: str, **params: object) -> Change:
    spec = MANIFEST_FAULTS[fault_id]
    return lambda root, snap: spec.inject(root, snap, **params)


def one_commit(
    repo: Path, path: Path, namespace: str, changes: Sequence[Change], message: str
) -> Commit:
    """Several changes (faults and harmless edits) in one commit."""
    done = []
    for change in changes:
        snap = load_desired(path, namespace=namespace).snapshot
        done.append(change(repo, snap))
    return Commit(commit_all(repo, message), tuple(done))


def commits(repo: Path, path: Path, namespace: str, changes: Sequence[Change]) -> list[Commit]:
    """One commit per change, in order."""
    return [
        one_commit(repo, path, namespace, [c], f"change {i + 1}") for i, c in enumerate(changes)
    ]
