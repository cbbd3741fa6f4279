"""A detector that raises is a bug, never "nothing found": ``detect`` exits 2 naming it.

No wall-clock budget decides a verdict any more (a loaded machine made a slow
detector an error, and an error dropped its findings); what remains an error is a
detector that raises: a built-in one is gitmedic's bug and says so, a learned rule
is named as such.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.bot.cli import detect as detect_cmd
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.registry import Registry
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.detectors.spec import Detector, DetectorSpec
from tests.cli.conftest import Cli, faulty_boutique
from tests.manifests.helpers import commit_all, init_repo

BROKEN = DetectorSpec(
    id="zz-broken",
    description="raises on every snapshot",
    kinds=frozenset({"Service"}),
    severity=Severity.CRITICAL,
    remediation="none",
)


def _raises(snapshot: Snapshot) -> Iterator[Finding]:
    raise KeyError("spec")


def test_a_built_in_that_raises_exits_2_naming_it_as_a_bug(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_broken = Registry([*builtin_registry(), Detector(BROKEN, _raises)])
    monkeypatch.setattr(detect_cmd, "builtin_registry", lambda: with_broken)
    manifest = faulty_boutique(tmp_path / "k.yaml", "selector")

    text = cli("detect", manifest, "--namespace", "boutique")
    report = cli("detect", manifest, "--namespace", "boutique", "--format", "json")

    assert text.rc == 2 and report.rc == 2
    assert "built-in detector zz-broken failed (a bug in gitmedic" in text.err
    assert "KeyError: 'spec'" in text.err
    (error,) = report.json()["errors"]
    assert error["file"] == "detector:zz-broken" and "a bug in gitmedic" in error["message"]
    assert report.json()["findings"], "the other detectors still ran"


RULE = """id: learned-fails
description: 'fails at run time on every Service'
severity: warning
reads: [Service]
match: int("not-a-number") == 0
message: '{kind} {name}'
playbooks: []
"""


@pytest.mark.integration
def test_detect_exits_2_naming_a_learned_rule_that_fails(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    faulty_boutique(repo / "app" / "k.yaml")
    (repo / ".gitmedic" / "rules").mkdir(parents=True)
    (repo / ".gitmedic" / "rules" / "learned-fails.yaml").write_text(RULE)
    init_repo(repo)
    commit_all(repo, "app and a rule")

    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(repo / "app"), "--namespace", "boutique"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )

    assert done.returncode == 2, done.stderr
    assert "learned rule learned-fails failed" in done.stderr
    assert "Traceback" not in done.stderr
