"""``gitmedic run --forge github`` end to end: REPO is gitmedic's clone, and what the bot pushes
through the API (its PR's branch, the merge) is fetched into it before it is gated or deployed.

The GitHub stand-in (tests/support) serves REST over real HTTP from a bare repo;
REPO is a clone of that bare repo, and the sim deploys REPO's ``main``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.github_standin import shared_server
from tests.support.github_store import GitHubStore
from tests.transaction.e2e_world import APP, NAMESPACE, git, make_repo

TOKEN = "ghp_" + "run0github0test0token0000000000000000"
ROOT = Path(__file__).parents[2]


@pytest.mark.integration
def test_run_on_github_gates_the_branch_it_pushed_and_commits_the_fix(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work")  # catalog's targetPort broken on main
    bare = tmp_path / "github.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    store = GitHubStore(git_dir=bare)
    url = shared_server().use(store)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    env = {
        **os.environ,
        "GITHUB_REPOSITORY": store.full_name,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": url,
    }
    run = ["run", str(clone), "--path", APP, "--namespace", NAMESPACE, "--cluster", "sim"]
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", *run, "--forge", "github", "--once", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "unknown revision" not in done.stderr
    (incident,) = json.loads(done.stdout)["incidents"]
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
