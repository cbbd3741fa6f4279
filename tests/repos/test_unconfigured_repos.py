"""``run`` on a real GitOps repository nobody ran ``gitmedic init`` on: the discovered apps.

Without ``.gitmedic/config.yaml`` the command acts on the apps init would write
(each environment its own app: own incidents, attempts, lease), never on the whole
repository as one app: a fault committed into one environment is fixed there, and
no file another environment renders from changes; no config file is written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.manifests.helpers import commit_all, git, init_repo
from tests.repos.conftest import gitmedic
from tests.repos.test_discovered_repos import FAULTS, FIXTURES, prs

NOTE = "gitmedic: no .gitmedic/config.yaml: acting on the {} apps discovered in the repository"


def unconfigured(tmp_path: Path, fixture: str) -> tuple[Path, list[tuple[str, str]]]:
    """The fixture committed as is, and the (app, namespace) pairs init would write."""
    repo = init_repo(tmp_path / fixture)
    shutil.copytree(FIXTURES / fixture, repo, dirs_exist_ok=True)
    commit_all(repo, "the team's repository")
    scratch = tmp_path / "init-scratch"
    shutil.copytree(repo, scratch)
    assert gitmedic("init", ".", cwd=scratch).rc == 0
    written = yaml.safe_load((scratch / ".gitmedic" / "config.yaml").read_text())
    return repo, [(a["name"], a["namespace"]) for a in written["apps"]]


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize("fixture", sorted(FAULTS))
def test_a_fault_in_one_environment_of_an_unconfigured_repo_is_fixed_there_only(
    tmp_path: Path, fixture: str
) -> None:
    repo, apps = unconfigured(tmp_path, fixture)
    assert len(apps) > 1, "the fixture has several environments"
    file, good, bad = FAULTS[fixture]
    (repo / file).write_text((repo / file).read_text().replace(good, bad))
    broken = commit_all(repo, "a release nobody pushed")
    run = gitmedic("run", ".", "--cluster", "sim", "--forge", "local", "--once", "--json", cwd=repo)
    assert "Traceback" not in run.err, run.err[-3000:]
    assert NOTE.format(len(apps)) in run.err
    (start,) = [line for line in run.err.splitlines() if "gitmedic: starting:" in line]
    assert f"{len(apps)} apps: " in start, start
    for name, namespace in apps:  # each listed; one whose chart is remote says why offline
        assert f"{name} ({namespace})" in start or f"{name} ({namespace}; not deployable" in start
    report = json.loads(run.out)
    assert {a["app"] for a in report["apps"]} == {name for name, _ in apps}
    (fix,) = [p for p in prs(repo) if "memory" not in str(p["branch"])]
    assert fix["state"] == "merged", fix
    changed = git(repo, "diff", "--name-only", broken, "main", "--", ".", ":!.gitmedic")
    assert changed.split() == [file], "no file of another environment changed"
    assert good in git(repo, "show", f"main:{file}")
    fixed = [a for a in report["apps"] if any(i["transactions"] for i in a["incidents"])]
    assert len(fixed) == 1 and fixed[0]["healthy"], fixed
    assert fixed[0]["app"] in str(fix["branch"]), "the fix is the faulty environment's own"
    assert not (repo / ".gitmedic" / "config.yaml").exists(), "run writes no config"
