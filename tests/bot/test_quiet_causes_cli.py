"""Two faults whose cause desired state holds only quietly, fixed through ``gitmedic run``.

- An env var that references a Secret that does not exist: the pods cannot be
  created (``pod-config-error/secret-missing``). The latest commit to the
  container added that env var; its restore used to be narrowed away because
  the finding names the Secret, not the variable. The variable whose
  ``secretKeyRef`` names the missing Secret is what the finding implicates.
- An env address to a host no Service has and nothing of that name runs: the
  detector rightly says info (an optional component, as far as the manifests
  tell), so only an alert fires, whose evidence names the host. That quiet
  finding is the alert's cause, restored by bisect like any desired-state one.

Before, each opened an incident and escalated with no pull request. Each is
fixed on two real apps: one kept transaction, and the app's objects back to
what they were before the commit.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitmedic.sim.faults.git import commit_all, init_repo
from tests.bot.cli_world import git, gitmedic
from tests.conftest import APPS

pytestmark = pytest.mark.integration

MANIFESTS = {  # app -> (its one manifest file, namespace)
    "online-boutique": ("release/kubernetes-manifests.yaml", "boutique"),
    "sock-shop": ("deploy/kubernetes/complete-demo.yaml", "sock-shop"),
}
_SECRET = (
    "{indent}- name: {var}\n{indent}  valueFrom:\n{indent}    secretKeyRef:\n"
    "{indent}      name: {secret}\n{indent}      key: password\n"
)
_CATALOG_PORT = '        - name: PORT\n          value: "3550"\n'
_USER_MONGO = "        - name: mongo\n          value: user-db:27017\n"
_CHECKOUT_CART = '            value: "cartservice:7070"\n          resources:'
FAULTS = {  # case -> (app, text in the manifest, what the commit makes of it)
    "secret-missing-online-boutique": (
        "online-boutique",
        _CATALOG_PORT,
        _CATALOG_PORT + _SECRET.format(indent="        ", var="DB_PASSWORD", secret="catalog-db"),
    ),
    "secret-missing-sock-shop": (
        "sock-shop",
        _USER_MONGO,
        _USER_MONGO
        + _SECRET.format(indent="        ", var="MONGO_PASSWORD", secret="user-db-credentials"),
    ),
    "unknown-host-sock-shop": (
        "sock-shop",
        _USER_MONGO,
        _USER_MONGO.replace("user-db:27017", "user-dbx:27017"),
    ),
    "unknown-host-online-boutique": (
        "online-boutique",
        _CHECKOUT_CART,
        _CHECKOUT_CART.replace("cartservice:7070", "cartsvc:7070"),
    ),
}


def _objects(repo: Path, rev: str, file: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(git(repo, "show", f"{rev}:{file}")) if d]


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_the_fault_is_fixed_by_one_kept_transaction(tmp_path: Path, case: str) -> None:
    name, before, after = FAULTS[case]
    manifest, namespace = MANIFESTS[name]
    repo, app = tmp_path / "repo", f"apps/{name}"
    file = f"{app}/{Path(manifest).name}"
    (repo / app).mkdir(parents=True)
    shutil.copy(APPS / name / manifest, repo / file)
    init_repo(repo)
    baseline = git(repo, "rev-parse", "HEAD")
    text = (repo / file).read_text()
    assert text.count(before) == 1
    (repo / file).write_text(text.replace(before, after))
    commit_all(repo, f"{case}: a change")

    argv: list[str | Path] = ["run", repo, "--path", app, "--namespace", namespace]
    done = gitmedic(*argv, "--cluster", "sim", "--forge", "local", "--once", "--json")

    assert done.rc == 0, done.err
    report = done.json()
    assert report["healthy"] is True
    (incident,) = report["incidents"]
    assert [t["status"] for t in incident["transactions"]] == ["committed"]
    assert _objects(repo, "main", file) == _objects(repo, baseline, file)
