"""The real ``gitmedic serve --repos FILE`` over two local-forge repositories on the sim.

A fault committed into the second repository is fixed by a pull request there and
nowhere else; a signed comment for that repository acts there, with the commenter's
permission there (the same person may do nothing in the first); a delivery for a
repository not listed is acknowledged, counted and acted on nowhere. A bad service
config is a usage error naming the file and line, before anything starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import BOT_LOGIN, Permission, PullRequest
from gitmedic.reconciler.transaction.forge_ports import HOLD_LABEL
from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import NEVER, SECRET, Served, git, gitmedic, prs, serve_process, until
from tests.bot.payloads import pr_comment
from tests.bot.test_run_every_app import WEB, repo_of

pytestmark = pytest.mark.integration
SHOP, BLOG = "alice/shop", "alice/blog"


def repository(tmp_path: Path, app: str, *, broken: bool) -> Path:
    """A repository of one app (``auto_merge: never``: a fix waits for a person) with bob's
    open pull request #1; ``broken``: its Service's port committed wrong on top."""

    def web(folder: Path, name: str) -> None:
        (folder / "web.yaml").write_text(WEB.format(ns=name, minor=1))

    repo = repo_of(tmp_path / app, [app], web)
    config = repo / ".gitmedic" / "config.yaml"
    config.write_text(config.read_text() + NEVER)
    commit_all(repo, "gitmedic: configuration")
    git(repo, "checkout", "-qb", "bob/readme")
    (repo / "README.md").write_text("bob's notes\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "bob: notes")
    git(repo, "checkout", "-q", "main")
    assert LocalForge(repo).open_pr_as("bob", "bob/readme", "main", "Notes", "").number == 1
    if broken:
        file = repo / "apps" / app / "web.yaml"
        file.write_text(file.read_text().replace("targetPort: 8080", "targetPort: 9090"))
        commit_all(repo, f"{app}: the service's port")
    return repo


@contextmanager
def serving_repos(listed: Path, state: Path, log: list[str]) -> Iterator[Served]:
    """``gitmedic serve --repos listed``; its log lines are in ``log`` once it stopped."""
    argv = ["--repos", str(listed), "--state-dir", str(state), "--interval", "2"]
    with serve_process([*argv, "--log-level", "info"], log=log) as served:
        yield served


def comment(served: Served, full_name: str, pr: int, user: str, body: str, cid: int) -> int:
    payload = pr_comment(pr, user, body, cid)
    payload["repository"].update(full_name=full_name, name=full_name.split("/")[1])
    return served.post("issue_comment", payload, f"repos-{cid}").status_code


def fixes(repo: Path) -> list[dict[str, object]]:
    return [p for p in prs(repo) if str(p["branch"]).startswith("gitmedic/")]


def replies(forge: LocalForge, number: int) -> list[str]:
    return [c.body for c in forge.list_comments(number) if c.author == BOT_LOGIN]


def test_serve_repos_fixes_the_broken_repository_only_and_routes_webhooks_by_repository(
    tmp_path: Path,
) -> None:
    shop = repository(tmp_path, "shop", broken=False)
    blog = repository(tmp_path, "blog", broken=True)
    listed = tmp_path / "repos.yaml"
    listed.write_text(
        f"repositories:\n  - {{repo: shop/repo, name: {SHOP}}}\n"
        f"  - {{repo: blog/repo, name: {BLOG}}}\n"
    )
    at_shop, at_blog = LocalForge(shop), LocalForge(blog)
    at_blog.set_permission("maria", Permission.MAINTAIN)  # of blog only
    log: list[str] = []
    with serving_repos(listed, tmp_path / "state", log) as served:
        assert until(lambda: bool(fixes(blog)), 300), "no fix PR in the broken repository"
        (fix,) = fixes(blog)
        number = int(str(fix["number"]))
        assert str(fix["branch"]).startswith("gitmedic/blog-")
        # for no repository served here: acknowledged, acted on nowhere
        assert comment(served, "alice/other", number, "maria", "/gitmedic hold", 901) == 202
        # maria may not act in shop: refused there, nothing held
        assert comment(served, SHOP, 1, "maria", "/gitmedic hold", 902) == 202
        assert comment(served, BLOG, number, "maria", "/gitmedic hold", 903) == 202

        def held() -> PullRequest | None:
            pr = at_blog.get_pr(number)
            return pr if HOLD_LABEL in pr.labels else None

        assert until(lambda: held() is not None, 120), replies(at_blog, number)
        assert until(lambda: bool(replies(at_shop, 1)), 60), "no answer in shop"
        metrics = httpx.get(f"{served.url}/metrics").text
    assert fixes(shop) == [], "the healthy repository has no fix"
    (refusal,) = replies(at_shop, 1)
    assert "Sorry @maria" in refusal and "permission" in refusal, refusal
    assert HOLD_LABEL not in at_shop.get_pr(1).labels
    assert len(replies(at_blog, number)) == 1, "the unlisted repository's comment was not run"
    assert replies(at_blog, 1) == [], "blog's #1 (bob's) was not commented"
    ignored = 'gitmedic_webhook_deliveries_total{event="issue_comment",result="unknown_repository"}'
    assert f"{ignored} 1.0" in metrics
    (start,) = [line for line in log if "gitmedic: starting:" in line]
    assert "2 repositories, 2 apps" in start and SHOP in start and BLOG in start, start
    assert any("repository alice/other is not served here" in line for line in log)


def test_a_bad_service_config_is_a_usage_error_at_its_line_and_nothing_starts(
    tmp_path: Path,
) -> None:
    listed = tmp_path / "repos.yaml"
    listed.write_text("repositories:\n  - repo: shop\n    paths: apps/web\n  - path: apps/blog\n")
    state = tmp_path / "state"
    env = {"GITMEDIC_WEBHOOK_SECRET": SECRET, "GITMEDIC_REPOS": str(listed)}
    done = gitmedic("serve", "--cluster", "sim", "--state-dir", state, env=env, timeout=120)
    assert done.rc == 2, done.err
    assert f"{listed}:3: repositories[0].paths: unknown key" in done.err
    assert f"{listed}:4: repositories[1]: missing 'repo'" in done.err
    assert f"{listed}:2: repositories[0].repo: {tmp_path / 'shop'} is not a git" in done.err
    assert not state.exists(), "nothing was started"
    clone = {**env, "GITMEDIC_CLONE_URL": "https://git.example/acme/shop.git"}
    refused = gitmedic("serve", "--cluster", "sim", "--state-dir", state, env=clone, timeout=120)
    assert refused.rc == 2, refused.err
    assert "GITMEDIC_CLONE_URL names one repository's clone" in refused.err, refused.err
    assert not state.exists(), "nothing was started"
