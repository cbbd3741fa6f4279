"""A restore touches only what a finding implicates, through the real ``gitmedic run``.

One commit brings a fault and two legitimate changes: a shadowing duplicate of
cartservice's ``REDIS_ADDR`` (the later ``localhost`` value wins, so the cart
loses its cache) and the new ``DB_PASSWORD`` and ``MYSQL_PWD``. The
``env-shadowed`` recipe restores the container's whole ``env`` list, which used
to delete both new variables too (and merge as low risk); now only the
duplicate goes, and the fix PR's diff on the local forge shows nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import git, gitmedic, prs
from tests.bot.run_world import app_repo

pytestmark = pytest.mark.integration

REDIS = '        - name: REDIS_ADDR\n          value: "redis-cart:6379"\n'
LEGITIMATE = (
    '        - name: DB_PASSWORD\n          value: "s3cret-db"\n'
    '        - name: MYSQL_PWD\n          value: "s3cret-mysql"\n'
)
SHADOW = '        - name: REDIS_ADDR\n          value: "localhost:6379"\n'


def test_only_the_faulted_field_changes_back(tmp_path: Path) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    manifest = repo / app / "kubernetes-manifests.yaml"
    good = manifest.read_text()
    assert good.count(REDIS) == 1
    manifest.write_text(good.replace(REDIS, REDIS + LEGITIMATE + SHADOW))
    commit_all(repo, "cart: database credentials and a cache address")

    done = gitmedic("run", repo, "--path", app, "--namespace", namespace, "--cluster", "sim",
                    "--forge", "local", "--once", "--json")  # fmt: skip

    assert done.rc == 0, done.err
    (incident,) = done.json()["incidents"]
    assert [t["status"] for t in incident["transactions"]] == ["committed"]
    fix = next(pr for pr in prs(repo) if pr["number"] == incident["transactions"][0]["pr"])
    diff = git(repo, "diff", "-U0", f"{fix['merge_sha']}^1", fix["merge_sha"], "--", app)
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert changed == ["-" + line for line in SHADOW.splitlines()], diff
    assert git(repo, "show", f"main:{app}/kubernetes-manifests.yaml") == good.replace(
        REDIS, REDIS + LEGITIMATE
    ).rstrip("\n"), "DB_PASSWORD and MYSQL_PWD stay; only the duplicate is gone"
