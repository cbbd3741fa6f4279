"""The PR anatomy end to end: ``gitmedic run --cluster sim --forge local --once`` in a
subprocess; the PRs found with ``gitmedic prs --json``, their bodies as the local forge
stores them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from tests.bot.cli_world import BOUTIQUE, SERVICE, prs, run_app, target_port_fault
from tests.bot.run_world import app_repo

pytestmark = pytest.mark.integration


def test_a_fix_pr_shows_each_changed_field_with_its_value_before_and_after(
    tmp_path: Path,
) -> None:
    repo, app, namespace = app_repo(tmp_path, BOUTIQUE)
    target_port_fault(repo, app, namespace)
    done = run_app(repo, app, namespace)
    assert done.rc in (0, 1), done.err
    fix = [p for p in prs(repo) if re.fullmatch(r"gitmedic/.+/attempt-1", p["branch"])]
    assert len(fix) == 1, [p["branch"] for p in prs(repo)]
    body = LocalForge(repo).get_pr(fix[0]["number"]).body  # as the forge stores it
    assert "### Changed fields" in body
    row = re.search(rf"^\| (\S+) \| Service {namespace}/{SERVICE}: (\S+) \| (\S+) \| (\S+) \|$",
                    body, re.MULTILINE)  # fmt: skip
    assert row is not None, body
    file, field, before, after = row.groups()
    assert file.startswith(f"{app}/") and field.endswith("targetPort")
    assert before != after  # the faulty port on main, the one the container serves after
