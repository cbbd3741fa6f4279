"""``.gitmedic/architecture.md`` is written by reflection through the memory PR of ``gitmedic run``.

The summary pins the commit it describes (the fix's merge) and the topology's
fingerprint; it reaches main only through the memory PR, which the guard
(``gitmedic memory check``) accepts, and the LLM strategy reads it through its
``read_architecture`` tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.memory.architecture import ARCHITECTURE_PATH, pinned, topology
from gitmedic.reconciler.manifests.load import load_desired
from tests.bot.cli_world import git, gitmedic, prs, target_port_fault
from tests.bot.run_world import app_repo

pytestmark = pytest.mark.integration


def test_run_writes_the_architecture_summary_through_the_memory_pr(tmp_path: Path) -> None:
    repo, app, namespace = app_repo(tmp_path, "online-boutique")
    target_port_fault(repo, app, namespace)

    done = gitmedic("run", repo, "--path", app, "--namespace", namespace, "--cluster", "sim",
                    "--forge", "local", "--once", "--json")  # fmt: skip

    assert done.rc == 0, done.err
    fix, memory = prs(repo)
    assert fix["state"] == "merged" and memory["state"] == "merged"
    changed = git(repo, "diff", "--name-only", f"{memory['merge_sha']}^1", memory["merge_sha"])
    assert ARCHITECTURE_PATH in changed.splitlines(), "it came in through the memory PR"
    text = git(repo, "show", f"main:{ARCHITECTURE_PATH}")
    pin = pinned(text + "\n")
    assert pin is not None
    commit, fingerprint = pin
    assert commit == fix["merge_sha"], "the front matter pins the fix's merge commit"
    desired = load_desired(repo / app, rev=commit, namespace=namespace).snapshot
    assert fingerprint == topology(desired).fingerprint()
    assert "| boutique/productcatalogservice | ClusterIP | grpc 3550->3550/TCP |" in text
    assert gitmedic("memory", "check", repo).rc == 0, "the guard accepts it"
