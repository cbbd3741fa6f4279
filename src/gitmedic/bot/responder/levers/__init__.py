"""Runtime levers: the GitOps mitigations for faults no commit caused (FAULTS.md, B-class).

STRATUS mitigates a runtime fault in the cluster (restart, scale, move); gitmedic
never writes to the cluster, but Git holds the same levers: a memory limit, a
restart annotation on the pod template, replicas, node affinity, an image. A
lever reads the finding, the live snapshot and the desired state, decides
whether its evidence fits (an OOM kill with nothing that explains more memory,
pods wedged with no config change, ...) and, when it does, returns one small
edit made by the same manifest machinery as every fix (a byte-exact ruamel
edit of the declaring file). The responder asks the levers for live-only
findings after the playbooks' restores and *before* the regression bisect, so
a harmless recent commit is not blamed for a runtime fault.

A lever's fix is strategy ``lever``: no built-in policy rule vouches for it, so
it is ``medium`` and waits for a person unless the repo's policy allows it
(``strategies: [lever]``). It goes through the same transaction as any fix: a
lever that does not help is reverted like any other. Each lever names a
built-in playbook (``playbooks/<id>/README.md``) that documents it for people
and the model; a lever whose playbook failed in an earlier attempt of the same
incident is set aside like any failed playbook.

:data:`LEVERS` is the registry, in the order they are asked (the most specific
evidence first); ids are unique.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gitmedic.bot.responder.levers.evidence import Bounds, Evidence, Lever, SeenHealthy
from gitmedic.bot.responder.levers.memory import RAISE_MEMORY_LIMIT
from gitmedic.bot.responder.levers.node import AVOID_NODE, LIFT_NODE_AVOIDANCE
from gitmedic.bot.responder.levers.restart import RESTART
from gitmedic.bot.responder.levers.rollback import ROLLBACK_IMAGE
from gitmedic.bot.responder.levers.scale import SCALE_OUT
from gitmedic.bot.responder.workspace import Fix


def registry(levers: Sequence[Lever]) -> tuple[Lever, ...]:
    """The levers in the order given; a duplicate id is a programming error."""
    seen: set[str] = set()
    for lever in levers:
        if lever.id in seen:
            raise ValueError(f"lever {lever.id!r} is registered twice")
        seen.add(lever.id)
    return tuple(levers)


LEVERS = registry(
    (RAISE_MEMORY_LIMIT, RESTART, SCALE_OUT, ROLLBACK_IMAGE, AVOID_NODE, LIFT_NODE_AVOIDANCE)
)

LEVER_PLAYBOOKS = frozenset(lever.playbook for lever in LEVERS)  # the levers' hypotheses


def lever_fix(
    evidence: Evidence, playbooks: Collection[str], levers: Sequence[Lever] = LEVERS
) -> Fix | None:
    """The first lever whose evidence fits and whose playbook is in use, or None."""
    for lever in levers:
        if lever.playbook not in playbooks:
            continue
        fix = lever.propose(evidence)
        if fix is not None:
            return fix
    return None


__all__ = [
    "AVOID_NODE",
    "LEVERS",
    "LEVER_PLAYBOOKS",
    "LIFT_NODE_AVOIDANCE",
    "RAISE_MEMORY_LIMIT",
    "RESTART",
    "ROLLBACK_IMAGE",
    "SCALE_OUT",
    "Bounds",
    "Evidence",
    "Lever",
    "SeenHealthy",
    "lever_fix",
    "registry",
]
