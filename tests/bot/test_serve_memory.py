"""A fix a person approves through ``gitmedic serve`` gets its memory PR, as one ``run`` keeps.

``policy: {auto_merge: never, rules: []}``: ``run --once`` leaves the fix waiting;
``/gitmedic approve`` (a signed webhook to a ``gitmedic serve`` process) lets it
merge, deploy and verify. Meanwhile the monitor sees the incident resolve (the
fix is deployed before its window ends), so the memory PR must not hang on the
incident still being open: once the fix is kept, reflection's PR is opened on
the forge, gated, and (the policy again) waits for a person.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import Permission
from gitmedic.reconciler.transaction import Journal, Phase
from tests.bot.cli_world import (
    NEVER,
    configured_repo,
    prs,
    run_once,
    serving,
    target_port_fault,
    until,
)

pytestmark = pytest.mark.integration


def test_a_fix_approved_through_serve_gets_its_memory_pr(tmp_path: Path) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    target_port_fault(repo, app, namespace)
    assert run_once(repo).rc == 1  # the fix waits for a person
    (fix,) = prs(repo)

    LocalForge(repo).set_permission("maria", Permission.MAINTAIN)
    journal = Journal(repo / ".git" / "gitmedic" / "journal.sqlite")

    def memory_pr() -> list[dict[str, Any]]:
        """The memory PR once gated (it is opened, then gated, in two steps)."""
        found = [p for p in prs(repo) if str(p["branch"]).endswith("/memory")]
        return [p for p in found if any(s["context"] == "gitmedic/gate" for s in p["statuses"])]

    with serving(repo) as served:
        assert served.comment(fix["number"], "maria", "/gitmedic approve", 4201).status_code == 202
        assert until(lambda: bool(memory_pr()), 300), "no memory PR after the approved fix"
    first = journal.transactions()[0]
    assert first.phase is Phase.COMMITTED and first.pr == fix["number"], first.reason
    (memory,) = memory_pr()
    assert memory["branch"] == f"gitmedic/{first.plan.incident}/memory"
    assert memory["state"] == "open", "auto_merge: never: the memory PR waits for a person too"
    gate = {s["context"]: s for s in memory["statuses"]}.get("gitmedic/gate")
    assert gate is not None and gate["state"] == "success"
