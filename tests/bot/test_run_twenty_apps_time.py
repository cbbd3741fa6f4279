"""Issue 26's acceptance: a repo of 20 apps with a fault committed into one, ``run --once``
fixes it with that app's PRs only, in at most 4x the time of the same repo with one app.

Through the real command (subprocess) on the sim and the local forge. The time compared
is the cluster's clock, which ``run --once`` reports when it ends: the sim's, shared by
every app of the run (deterministic, whatever the machine's load); the wall-clock ratio
is measured in bench/apps_scale.py. Watched one after the other, the 19 healthy apps'
settling would add up (about 12x); watched side by side, they overlap the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitmedic.sim.faults.git import commit_all
from tests.bot.test_run_every_app import WEB, changed_since, fix_prs, gitmedic, repo_of

BROKEN = "app-11"


def broken_repo(root: Path, apps: int) -> tuple[Path, str]:
    """``apps`` web apps, the Service of one pointed at a port its pods do not declare."""
    names = [f"app-{i:02}" for i in range(1, apps + 1)] if apps > 1 else [BROKEN]

    def web(folder: Path, name: str) -> None:
        (folder / "web.yaml").write_text(WEB.format(ns=name, minor=int(name[-2:]) % 3))

    root.mkdir()
    repo = repo_of(root, names, web)
    file = repo / "apps" / BROKEN / "web.yaml"
    file.write_text(file.read_text().replace("targetPort: 8080", "targetPort: 9090"))
    return repo, commit_all(repo, f"{BROKEN}: the service's port")


def took(stderr: str) -> float:
    (seconds,) = re.findall(r"run --once took (\d+) s of the cluster's clock", stderr)
    return float(seconds)


@pytest.mark.integration
def test_twenty_apps_are_fixed_in_at_most_four_times_one_app_s_time(tmp_path: Path) -> None:
    spent: dict[int, float] = {}
    for apps in (1, 20):
        repo, broken = broken_repo(tmp_path / f"apps-{apps}", apps)
        run = gitmedic(repo, "--once", "--json", "--cluster", "sim", "--forge", "local")
        assert run.returncode == 0, run.stderr[-3000:]  # 0: every app healthy (run_cmd's doc)
        report = json.loads(run.stdout)
        assert report["healthy"] is True
        prs = fix_prs(repo)
        assert prs and all(p["branch"].startswith(f"gitmedic/{BROKEN}-") for p in prs), prs
        assert all(p["state"] == "merged" for p in prs), prs
        assert changed_since(repo, broken) == [f"apps/{BROKEN}/web.yaml"]
        if apps > 1:
            fixed = [a["app"] for a in report["apps"] if a["incidents"]]
            assert fixed == [BROKEN], "one app answered, the 19 others untouched"
        spent[apps] = took(run.stderr)
    assert spent[1] > 0
    assert spent[20] <= 4 * spent[1], spent
