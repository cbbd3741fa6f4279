"""``gitmedic run --forge github`` when GitHub behaves as it does on a bad day.

The same run as tests/bot/test_run_github.py, with the stand-in acting up the way
api.github.com does: the branch gitmedic pushes stays invisible for two reads,
the merge first meets a secondary rate limit with ``Retry-After: 0``, and the
repository already has 150 open PRs of other people (so every lookup pages). The
run must still commit its fix, and every exchange is checked against GitHub's
description (tests/support/github_conformance.py).

A second run acts as a GitHub App whose installation tokens die early (GitHub
revoked them, or the clocks disagree): each refused one is renewed.

Both pair the sim with the GitHub forge on the loopback stand-in, which the command
refuses (tests/bot/test_start_line.py), so they are driven in-process past that check
(:func:`gitmedic.bot.cli.run.run_on`) as tests/bot/test_run_github.py is.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import build_parser
from gitmedic.bot.cli.run import run_on
from gitmedic.bot.forges.github_env import github_forge_from_env, working_clone
from tests.bot.test_run_github import TOKEN
from tests.forge.test_github_forge import _app_key
from tests.support.github_standin import shared_server
from tests.support.github_store import Fault, GitHubStore
from tests.transaction.e2e_world import APP, NAMESPACE, make_repo


def run_github(
    clone: Path, env: Mapping[str, str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """``gitmedic run --forge github --once --json`` over the sim, in-process."""
    forge = github_forge_from_env(env)  # as --forge github builds it
    forge.fetched = working_clone(clone, forge).sync
    forge.fetched()
    argv = ["run", str(clone), "--path", APP, "--namespace", NAMESPACE, "--forge", "github"]
    code = run_on(clone, build_parser().parse_args([*argv, "--once", "--json"]), "sim", forge)
    out, err = capsys.readouterr()
    return code, out, err


def crowded(store: GitHubStore, count: int) -> None:
    """``count`` open PRs by a person, on branches of their own (numbers 1..count)."""
    main = store.branch_sha("main")
    for n in range(1, count + 1):
        store.git("update-ref", f"refs/heads/people/{n}", str(main))
        store.pulls[n] = {
            "number": n,
            "id": store.new_id(),
            "title": f"people's change {n}",
            "body": "",
            "head": f"people/{n}",
            "base": "main",
            "state": "open",
            "labels": [],
            "user": "alice",
            "head_sha": main,
        }


@pytest.mark.integration
def test_run_on_a_lagging_rate_limited_crowded_github_still_commits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = make_repo(tmp_path / "work")
    bare = tmp_path / "github.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    store = GitHubStore(git_dir=bare)
    crowded(store, 150)
    store.lag.new_refs = 2  # a new branch misses its first two reads
    limited = {"Retry-After": "0"}
    store.faults.append(Fault("PUT", "/merge", 403, limited, "secondary rate limit"))
    url = shared_server().use(store)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    env = {"GITHUB_REPOSITORY": store.full_name, "GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": url}
    code, out, err = run_github(clone, env, capsys)
    assert code == 0, err[-3000:]
    (incident,) = json.loads(out)["incidents"]
    fix = incident["transactions"][0]
    assert (fix["status"], fix["attempt"]) == ("committed", 1), fix
    assert store.pulls[fix["pr"]]["state"] == "merged" and fix["pr"] == 151
    merges = [p for m, p in store.requests if m == "PUT" and p.endswith("/pulls/151/merge")]
    assert len(merges) == 2  # the first met the rate limit of 0 s: retried, not "denied"
    assert "targetPort: 3550" in store.git("show", f"main:{APP}/catalog.yaml")
    assert store.violations == []


@pytest.mark.integration
def test_run_as_an_app_whose_tokens_die_early_renews_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private, public = _app_key()
    work = make_repo(tmp_path / "work")
    bare = tmp_path / "github.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    store = GitHubStore(git_dir=bare, app_id=7, app_public_key=public)
    store.tokens.add("ghs_placeholder_nobody_has")  # from now on a token is required
    store.minted.max_uses = 25  # each installation token is refused after 25 requests
    url = shared_server().use(store)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    env = {
        "GITHUB_REPOSITORY": store.full_name,
        "GITHUB_APP_ID": "7",
        "GITHUB_APP_PRIVATE_KEY": private,
        "GITHUB_API_URL": url,
    }
    code, out, err = run_github(clone, env, capsys)
    assert code == 0, err[-3000:]
    (incident,) = json.loads(out)["incidents"]
    assert incident["transactions"][0]["status"] == "committed"
    assert len(store.minted.expiry) >= 3  # the first token and at least two renewals
    assert all(uses <= 25 for uses in store.minted.uses.values())
    assert private not in err and not any(t in err for t in store.minted.expiry)
