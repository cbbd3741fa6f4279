"""``gitmedic run --forge github`` end to end: REPO is gitmedic's clone, and what the bot pushes
through the API (its PR's branch, the merge) is fetched into it before it is gated or deployed.

The GitHub stand-in (tests/support) serves REST over real HTTP from a bare repo;
REPO is a clone of that bare repo, and the sim deploys REPO's ``main``. The command
refuses the sim with ``--forge github`` (tests/bot/test_start_line.py), so the run
is driven in-process past that check (:func:`gitmedic.bot.cli.run.run_on`), with
the forge ``--forge github`` builds from the environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import build_parser
from gitmedic.bot.cli.run import run_on
from gitmedic.bot.forges.github_env import github_forge_from_env, working_clone
from tests.support.github_standin import shared_server
from tests.support.github_store import GitHubStore
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

TOKEN = "ghp_" + "run0github0test0token0000000000000000"


@pytest.mark.integration
def test_run_on_github_gates_the_branch_it_pushed_and_commits_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = make_repo(tmp_path / "work")  # catalog's targetPort broken on main
    bare = tmp_path / "github.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    store = GitHubStore(git_dir=bare)
    url = shared_server().use(store)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    env = {"GITHUB_REPOSITORY": store.full_name, "GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": url}
    forge = github_forge_from_env(env)  # as --forge github builds it
    forge.fetched = working_clone(clone, forge).sync
    forge.fetched()
    argv = ["run", str(clone), "--path", APP, "--namespace", NAMESPACE, "--forge", "github"]
    args = build_parser().parse_args([*argv, "--once", "--json"])
    assert run_on(clone, args, "sim", forge) == 0
    out, err = capsys.readouterr()
    assert "unknown revision" not in err
    assert "gitmedic: starting: forge github (" in err
    (incident,) = json.loads(out)["incidents"]
    fix = incident["transactions"][0]
    assert (fix["status"], fix["attempt"]) == ("committed", 1), fix
    # On GitHub: the PR is merged, its gate status green on the head the gate saw.
    pr = store.pulls[fix["pr"]]
    assert pr["state"] == "merged" and pr["head"] == fix["branch"]
    gates = [st for st in store.statuses if st["context"] == "gitmedic/gate"]
    assert gates and gates[0]["state"] == "success" and gates[0]["sha"] == pr["head_sha"]
    assert "targetPort: 3550" in store.git("show", f"main:{APP}/catalog.yaml")
    # The clone followed: its main is GitHub's.
    assert git(clone, "rev-parse", "main") == store.git("rev-parse", "main").strip()
