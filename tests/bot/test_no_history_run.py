"""Faults with no history, through the real ``gitmedic run`` in a subprocess.

cartservice's Service targets port 9999 from the repo's first commit on, so there
is no commit to bisect. Its pods serve one port: the fix sets it, merges as a
low-risk restore and is committed. With a second served port the evidence does
not decide: the PR proposes the likeliest port, lists the other in its body and
waits for a person.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.sim.faults.git import init_repo
from tests.bot.cli_world import git, run_app
from tests.conftest import APPS

pytestmark = pytest.mark.integration

MANIFEST = APPS / "online-boutique" / "release" / "kubernetes-manifests.yaml"
TARGET = "  - name: grpc\n    port: 7070\n    targetPort: 7070\n"
PORT = "        - containerPort: 7070\n"
METRICS = "        - name: metrics\n          containerPort: 9464\n"


def born_broken(tmp: Path, *, second_port: bool) -> tuple[Path, str]:
    repo = tmp / "repo"
    target = repo / "apps" / "online-boutique" / "kubernetes-manifests.yaml"
    target.parent.mkdir(parents=True)
    shutil.copy(MANIFEST, target)
    text = target.read_text()
    assert text.count(TARGET) == 1
    text = text.replace(TARGET, TARGET.replace("targetPort: 7070", "targetPort: 9999"))
    if second_port:
        cart = text.index("name: cartservice\n")
        at = text.index(PORT, cart) + len(PORT)
        text = text[:at] + METRICS + text[at:]
    target.write_text(text)
    init_repo(repo)
    return repo, "apps/online-boutique"


def run(repo: Path, app: str) -> dict[str, Any]:
    done = run_app(repo, app, "boutique")
    assert done.rc in (0, 1), done.err
    out: dict[str, Any] = done.json()
    return out


def test_the_one_served_port_is_set_and_committed(tmp_path: Path) -> None:
    repo, app = born_broken(tmp_path, second_port=False)
    out = run(repo, app)
    (incident,) = out["incidents"]
    (txn,) = incident["transactions"]
    assert (txn["status"], txn["strategy"]) == ("committed", "playbook")
    main = git(repo, "show", f"main:{app}/kubernetes-manifests.yaml")
    assert TARGET.rstrip("\n") in main


def test_two_served_ports_wait_for_a_person_with_the_alternative_in_the_body(
    tmp_path: Path,
) -> None:
    repo, app = born_broken(tmp_path, second_port=True)
    out = run(repo, app)
    (incident,) = out["incidents"]
    (txn,) = incident["transactions"]
    assert txn["status"] == "held", txn
    pr = LocalForge(repo).get_pr(txn["pr"])
    assert pr.state.value == "open"
    body = pr.body
    assert "Alternatives: 9464 (served by container server)" in body
    assert "a person chooses" in body and "hold for a human" in body
    assert "targetPort: 9999" in git(repo, "show", f"main:{app}/kubernetes-manifests.yaml")
