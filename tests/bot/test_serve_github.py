"""``gitmedic serve --forge github`` end to end: a signed webhook acts through the GitHub API.

The GitHub stand-in (tests/support) serves REST over real HTTP and its bare repo
is what gitmedic clones into its state directory; the monitor thread runs the
loop over the sim on that clone, wired in-process (``serve`` itself refuses the sim
with ``--forge github``).
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gitmedic.bot.forges.github import GitHubForge
from gitmedic.bot.service.settings import ServeSettings
from gitmedic.bot.service.webhook.app import create_app
from gitmedic.bot.service.wiring import assemble, github_and_clone, wire
from tests.bot.payloads import pr_comment
from tests.bot.service_kit import SECRET, Bot
from tests.support.github_standin import shared_server
from tests.support.github_store import GitHubStore
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

TOKEN = "ghp_" + "serve0test0token000000000000000000000"
HOLD, APPROVED = "gitmedic:hold", "gitmedic:approved"


def github(tmp_path: Path) -> tuple[GitHubStore, dict[str, str]]:
    work = make_repo(tmp_path / "work")
    git(work, "reset", "-q", "--hard", "HEAD~1")  # the healthy baseline: nothing to fix
    bare = tmp_path / "github.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    store = GitHubStore(git_dir=bare)
    store.permissions["maria"] = "maintain"
    url = shared_server().use(store)
    env = {
        "GITHUB_REPOSITORY": store.full_name,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": url,
        "GITMEDIC_CLONE_URL": str(bare),
    }
    return store, env


def held_pr(store: GitHubStore, env: dict[str, str]) -> int:
    forge = GitHubForge(env["GITHUB_REPOSITORY"], token=TOKEN, base_url=env["GITHUB_API_URL"])
    base = store.git("rev-parse", "main").strip()
    files = {f"{APP}/cart.yaml": "kind: ConfigMap\n"}
    forge.commit_files("gitmedic/inc-1/attempt-1", base, files, "a fix")
    pr = forge.ensure_pr(
        "gitmedic/inc-1/attempt-1", "main", "fix(shop): a fix", "body",
        ["gitmedic", HOLD], state={"incident": "inc-1", "txn": "inc-1/attempt-1"},
    )  # fmt: skip
    return pr.number


def args(**over: object) -> argparse.Namespace:
    values: dict[str, object] = {
        "forge": "github", "cluster": "sim", "interval": 3600.0, "path": APP,
        "namespace": NAMESPACE, "watch": None,
    }  # fmt: skip
    return argparse.Namespace(**{**values, **over})


@pytest.mark.integration
def test_a_signed_approve_on_a_held_pr_adds_the_label_on_github(tmp_path: Path) -> None:
    store, env = github(tmp_path)
    number = held_pr(store, env)
    settings = ServeSettings(SECRET, tmp_path / "state", Path("."))
    # the stand-in GitHub over the sim: wired in-process, a pairing `serve` refuses
    served = wire(settings, args(), env, *github_and_clone(settings, env))
    assert (tmp_path / "state" / "clone" / APP / "catalog.yaml").exists(), "cloned under state"
    with served.running(), TestClient(create_app(served.service)) as client:
        bot = Bot(client, served.service)
        reply = bot.post("issue_comment", pr_comment(number, "maria", "/gitmedic approve", 901))
        assert reply.status_code == 202
        bot.settle()
    labels = {label for label in store.pulls[number]["labels"]}
    assert labels >= {HOLD, APPROVED}
    assert ("POST", f"/repos/{store.full_name}/issues/{number}/labels") in store.requests
    bodies = [c["body"] for c in store.comments.values() if c["issue"] == number]
    assert any(f"Approved: gitmedic merges #{number}" in body for body in bodies)
    assert served.monitor.steps >= 1, "the monitor ran in the same process"


def test_serve_github_without_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    from gitmedic.bot.forges.github_env import GitHubEnvError

    settings = ServeSettings(SECRET, tmp_path / "state", Path("."))
    # no --cluster: kube, the default with a real forge (the sim is refused with it)
    with pytest.raises(GitHubEnvError, match="needs GITHUB_REPOSITORY=owner/name"):
        assemble(settings, args(cluster=None), {"GITHUB_TOKEN": TOKEN})
    with pytest.raises(GitHubEnvError, match="GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY"):
        assemble(settings, args(cluster=None), {"GITHUB_REPOSITORY": "acme/manifests"})
