"""``/gitmedic revert`` to a real ``gitmedic serve``: the revert PR on the forge says who asked
and why, mu when they asked, and links the change it undoes (not the forge's "Reverts #N.")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.render.mu import MU_EXPLAINED
from gitmedic.reconciler.forge import Permission, PullRequest
from tests.bot.cli_world import NEVER, configured_repo, git, serving, until

pytestmark = pytest.mark.integration


def persons_merge(repo: Path, app: str, forge: LocalForge) -> int:
    """bob's harmless change to the app (one more replica), merged by him."""
    path = next(p for p in sorted((repo / app).rglob("*.yaml")) if "replicas: 1\n" in p.read_text())
    git(repo, "checkout", "-qb", "bob/replicas")
    path.write_text(path.read_text().replace("replicas: 1\n", "replicas: 2\n", 1))
    git(repo, "commit", "-qam", "one more replica")
    git(repo, "checkout", "-q", "main")
    pr = forge.open_pr_as("bob", "bob/replicas", "main", "One more replica", "")
    forge.merge(pr.number, pr.head_sha)
    return pr.number


def test_a_persons_revert_through_serve_opens_a_pr_that_says_who_and_why(tmp_path: Path) -> None:
    repo, app, _ = configured_repo(tmp_path, NEVER)
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)
    pr = persons_merge(repo, app, forge)

    def revert() -> PullRequest | None:
        found = forge.find_prs({"reverts": pr})
        return found[0] if found and "asked for it" in found[0].body else None

    with serving(repo) as served:
        words = "/gitmedic revert replicas are over the namespace quota"
        assert served.comment(pr, "maria", words, 4301).status_code == 202
        assert until(lambda: revert() is not None, 180), "no revert PR with the asked anatomy"
    opened = revert()
    assert opened is not None
    assert opened.body.startswith(
        f"Reverts #{pr} (One more replica) in **online-boutique**: @\u2060maria asked for it "
        f"with `/gitmedic revert` in a comment on #{pr}."
    )
    assert "> replicas are over the namespace quota" in opened.body
    assert "| when the revert was asked |" in opened.body and MU_EXPLAINED in opened.body


def test_a_revert_comment_is_answered_at_once_and_the_next_tick_opens_the_pr(
    tmp_path: Path,
) -> None:
    repo, app, _ = configured_repo(tmp_path, NEVER)
    forge = LocalForge(repo)
    forge.set_permission("maria", Permission.MAINTAIN)
    pr = persons_merge(repo, app, forge)

    def said(topic: str) -> list[str]:
        return [c.body for c in forge.list_comments(pr) if c.topic == topic]

    with serving(repo, interval=5.0) as served:
        assert served.comment(pr, "maria", "/gitmedic revert", 4302).status_code == 202
        assert until(lambda: bool(said("command:4302")), 120), "the command was not answered"
        (reply,) = said("command:4302")
        assert f"gitmedic opens the PR that reverts #{pr} at its next tick" in reply
        assert until(lambda: bool(said("revert")), 180), "no tick opened the revert PR"
    (revert,) = forge.find_prs({"reverts": pr})
    (told,) = said("revert")
    assert f"Opened #{revert.number} to revert #{pr}." in told, "the person is told which PR"
