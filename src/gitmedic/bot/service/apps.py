"""``gitmedic serve`` over every app: one loop and one :class:`LiveActions` per app, and
the webhook's verbs routed to the app they concern.

Each app keeps its own journal (incidents, attempts, transactions, its lease and
its queued work) in its own folder of the state directory, so one app's retry or
watch is never carried out by another's loop. A command on a PR goes to the app
whose journal holds that PR's transaction (else the first app, which answers as
for any PR that is not the bot's); a person's merge is watched by each app whose
folder it changed. What each records, its app's loop carries out at its tick.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from gitmedic.bot.commands.actions import DetectorRun
from gitmedic.bot.render.revert_asked import Asked
from gitmedic.bot.service.live_actions import LiveActions

__all__ = ["AppsActions", "app_state_dir"]


def app_state_dir(state_dir: Path, app: str, apps: int) -> Path:
    """Where an app's journal lives: the state directory itself when it is the only app
    (as before there were several), else a folder per app."""
    return state_dir if apps == 1 else state_dir / "apps" / app


class AppsActions:
    """The :class:`~gitmedic.bot.commands.actions.BotActions` of several apps' live actions."""

    def __init__(
        self,
        actions: Sequence[LiveActions],
        paths: Sequence[str],
        changed: Callable[[str], tuple[str, ...]],
    ) -> None:
        self.each, self.paths, self.changed = list(actions), list(paths), changed

    def _of_pr(self, pr: int) -> LiveActions:
        for actions in self.each:
            if any(t.pr == pr for t in actions.journal.transactions(app=actions.app)):
                return actions
        return self.each[0]

    def approve(self, pr: int) -> str:
        return self._of_pr(pr).approve(pr)

    def merge(self, pr: int) -> str:
        return self._of_pr(pr).merge(pr)

    def revert(self, pr: int, asked: Asked | None = None) -> str:
        return self._of_pr(pr).revert(pr, asked)

    def retry(self, pr: int) -> str:
        return self._of_pr(pr).retry(pr)

    def hold(self, pr: int) -> str:
        return self._of_pr(pr).hold(pr)

    def unhold(self, pr: int) -> str:
        return self._of_pr(pr).unhold(pr)

    def explain(self, pr: int) -> str:
        return self._of_pr(pr).explain(pr)

    def watch_merge(self, pr: int, merge_sha: str) -> None:
        files = self.changed(merge_sha)
        touched = [a for a, path in zip(self.each, self.paths, strict=True) if _in(files, path)]
        for actions in touched or self.each[:1]:
            actions.watch_merge(pr, merge_sha)

    def main_moved(self, sha: str) -> None:
        self.each[0].main_moved(sha)  # said once: every app's transactions re-gate

    def detector_run(self, run: DetectorRun) -> None:
        self.each[0].detector_run(run)

    @property
    def lock(self) -> object:
        return self.each[0].lock

    @property
    def journal(self) -> object:
        return self.each[0].journal


def _in(files: tuple[str, ...], path: str) -> bool:
    folder = PurePosixPath(path.strip("/") or ".")
    if str(folder) == ".":
        return bool(files)
    return any(PurePosixPath(f).is_relative_to(folder) for f in files)
