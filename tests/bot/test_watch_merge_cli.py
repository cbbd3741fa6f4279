"""A person's merge watched by a real ``gitmedic serve``: a transaction its ticks step (sync
wait, journaled window), never a sleep in the webhook; worse, a revert PR is offered and
left for a person, with the evidence on both PRs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import PrState
from tests.bot.cli_world import NEVER, SERVICE, configured_repo, git, serving, until
from tests.bot.payloads import pr_merged
from tests.bot.run_world import with_fault

pytestmark = pytest.mark.integration


def test_a_persons_broken_merge_gets_a_revert_offered_by_the_ticks_not_merged(
    tmp_path: Path,
) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    forge = LocalForge(repo)
    with serving(repo) as served:
        git(repo, "checkout", "-qb", "bob/image")
        with_fault(repo, app, namespace, "bad-image", target=SERVICE)
        git(repo, "checkout", "-q", "main")
        pr = forge.open_pr_as("bob", "bob/image", "main", "Bump the catalog image", "")
        sha = forge.merge(pr.number, pr.head_sha)
        webhook = pr_merged(pr.number, "bob", "bob", sha, "bob/image")
        assert served.post("pull_request", webhook, "cli-watch-1").status_code == 202

        def offered() -> bool:
            found = forge.find_prs({"reverts": pr.number})
            return bool(found) and any(c.topic == "watch" for c in forge.list_comments(pr.number))

        assert until(offered, 240), "no revert offered for the person's broken merge"
        (revert,) = forge.find_prs({"reverts": pr.number})

        def merged() -> bool:
            return forge.get_pr(revert.number).state is PrState.MERGED

        assert not until(merged, 6), "offered, never merged alone (ticks every 2 s meanwhile)"
    evidence = [c.body for c in forge.list_comments(revert.number) if c.topic == "watch-evidence"]
    assert len(evidence) == 1 and "made the app worse" in evidence[0]
    assert f"#{revert.number} reverts it" in evidence[0]
