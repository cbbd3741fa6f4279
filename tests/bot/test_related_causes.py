"""A cause in a related object, through the real ``gitmedic run`` in a subprocess.

The last commit relabels cartservice's pods (the Deployment's selector and pod
template labels) and leaves its Service as it was: the Service now selects
nothing. The Service has no change to restore, so bisect follows it to the
workload it selected before the commit and restores the labels there: the fix
PR's diff is one hunk in the Deployment's file, the Service's file untouched.
The app is online-boutique split into one file per object, as many repos keep it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import git, prs, run_app
from tests.bot.run_world import app_repo

pytestmark = pytest.mark.integration

SELECTOR = "    matchLabels:\n      app: cartservice\n"
TEMPLATE = "      labels:\n        app: cartservice\n"


def split_per_object(manifest: Path) -> None:
    """One file per object (``<kind>-<name>.yaml``), each document's text as it was."""
    for document in manifest.read_text().split("\n---\n")[1:]:
        kind = re.search(r"^kind: (\S+)", document, re.MULTILINE)
        name = re.search(r"^  name: (\S+)", document, re.MULTILINE)
        assert kind and name, document[:80]
        target = manifest.parent / f"{kind[1].lower()}-{name[1]}.yaml"
        target.write_text(f"---\n{document.strip(chr(10))}\n")
    manifest.unlink()


def test_a_relabelled_workload_gets_its_labels_back_and_its_service_is_untouched(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    split_per_object(repo / app / "kubernetes-manifests.yaml")
    commit_all(repo, "one file per object")
    deployment = repo / app / "deployment-cartservice.yaml"
    service = repo / app / "service-cartservice.yaml"
    good = deployment.read_text()
    assert good.count(SELECTOR) == good.count(TEMPLATE) == 1
    relabelled = good.replace(SELECTOR, SELECTOR.replace("cartservice", "cart-v2"))
    deployment.write_text(relabelled.replace(TEMPLATE, TEMPLATE.replace("cartservice", "cart-v2")))
    service_before = service.read_text()
    commit_all(repo, "cart: new pod labels")

    done = run_app(repo, app, namespace)

    assert done.rc == 0, done.err
    (incident,) = done.json()["incidents"]
    assert "service-selector-unmatched" in {f["detector"] for f in incident["findings"]}
    (txn,) = incident["transactions"]
    assert (txn["status"], txn["strategy"], txn["tokens"]) == ("committed", "bisect", 0)
    fix = next(pr for pr in prs(repo) if pr["number"] == txn["pr"])
    merge = fix["merge_sha"]
    files = git(repo, "diff", "--name-only", f"{merge}^1", merge)
    assert files == f"{app}/deployment-cartservice.yaml"
    diff = git(repo, "diff", "-U3", f"{merge}^1", merge)
    assert diff.count("\n@@ ") == 1, diff
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    selector, template = "      app: ", "        app: "
    assert changed == [
        f"-{selector}cart-v2",
        f"+{selector}cartservice",
        f"-{template}cart-v2",
        f"+{template}cartservice",
    ], diff
    assert git(repo, "show", f"main:{app}/deployment-cartservice.yaml") == good.rstrip("\n")
    assert service.read_text() == service_before
    assert git(repo, "show", f"main:{app}/service-cartservice.yaml") == service_before.rstrip("\n")
