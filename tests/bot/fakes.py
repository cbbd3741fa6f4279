"""A BotActions that records every call and answers from a script, and a LocalForge scene."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gitmedic.bot.commands.actions import ActionRefused, DetectorRun
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.revert_asked import Asked
from gitmedic.reconciler.forge import Permission
from tests.forge.backends import BRANCH, FIX, commit_files, make_repo


@dataclass
class FakeActions:
    calls: list[str] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)  # verb -> refusal message
    asked: list[Asked | None] = field(default_factory=list)  # each revert's who, where, why

    def _do(self, verb: str, pr: int) -> str:
        self.calls.append(f"{verb} #{pr}")
        if verb in self.refuse:
            raise ActionRefused(self.refuse[verb])
        return f"{verb} done for #{pr}."

    def approve(self, pr: int) -> str:
        return self._do("approve", pr)

    def merge(self, pr: int) -> str:
        return self._do("merge", pr)

    def revert(self, pr: int, asked: Asked | None = None) -> str:
        self.asked.append(asked)
        return self._do("revert", pr)

    def retry(self, pr: int) -> str:
        return self._do("retry", pr)

    def hold(self, pr: int) -> str:
        return self._do("hold", pr)

    def unhold(self, pr: int) -> str:
        return self._do("unhold", pr)

    def explain(self, pr: int) -> str:
        return self._do("explain", pr)

    def watch_merge(self, pr: int, merge_sha: str) -> None:
        self.calls.append(f"watch_merge #{pr} {merge_sha[:12]}")

    def main_moved(self, sha: str) -> None:
        self.calls.append(f"main_moved {sha[:12]}")

    def detector_run(self, run: DetectorRun) -> None:
        prs = ",".join(f"#{n}" for n in run.pull_requests) or "-"
        self.calls.append(f"detector_run {run.source} {run.name!r} {run.conclusion} {prs}")


@dataclass(frozen=True)
class Scene:
    repo: Path
    forge: LocalForge
    bot_pr: int  # an open gitmedic PR
    issue: int  # an open issue


def scene(tmp_path: Path) -> Scene:
    """A repo with an open bot PR, an issue, and people with each permission."""
    repo = make_repo(tmp_path / "repo")
    forge = LocalForge(repo, owner="alice")
    commit_files(repo, BRANCH, FIX, "main")
    pr = forge.ensure_pr(BRANCH, "main", "Fix targetPort", "body", state={"incident": "inc-1"})
    issue = forge.ensure_issue("gitmedic dashboard", "nothing yet")
    for user, permission in [
        ("maria", Permission.MAINTAIN),
        ("wendy", Permission.WRITE),
        ("trish", Permission.TRIAGE),
        ("rita", Permission.READ),
    ]:
        forge.set_permission(user, permission)
    return Scene(repo, forge, pr.number, issue.number)
