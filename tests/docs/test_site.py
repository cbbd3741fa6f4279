"""The docs site builds strictly, and its reference pages cover everything the code has.

Never with ``--quiet``: mkdocs then stops logging warnings, and ``--strict`` only
fails on warnings it logged (the broken-link test below caught that).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import build_parser
from gitmedic.detectors.builtin import builtin_registry
from tests.support.tools import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of docs/ and mkdocs.yml, with the reference generated and the site built."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", work / "docs", ignore=shutil.ignore_patterns("reference"))
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    generate = [sys.executable, str(ROOT / "tools/docs/generate.py"), str(work / "docs/reference")]
    done = subprocess.run(generate, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(work / "site")]
    done = subprocess.run(build, capture_output=True, text=True, timeout=300, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    return work


def test_every_detector_has_its_page_section_with_examples(site: Path) -> None:
    page = (site / "docs/reference/detectors.md").read_text()
    for det in builtin_registry():
        section = page.split(f"\n## {det.id}\n", 1)[1].split("\n## ", 1)[0]
        assert det.spec.remediation.split()[0] in section
        assert "**Finds**" in section and "**Passes**" in section, det.id
    assert (site / "site/reference/detectors/index.html").is_file()


def test_every_config_key_is_in_the_reference(site: Path) -> None:
    page = (site / "docs/reference/config.md").read_text()
    schema = json.loads((ROOT / "src/gitmedic/reconciler/config/schema.json").read_text())
    for key in schema["properties"]:
        assert f"| `{key}` |" in page
    for key in schema["$defs"]["policy"]["properties"]:
        assert f"| `policy.{key}` |" in page


def test_every_command_is_in_the_reference(site: Path) -> None:
    page = (site / "docs/reference/cli.md").read_text()
    (commands,) = [a for a in build_parser()._actions if hasattr(a, "choices") and a.choices]
    for name in commands.choices:
        assert f"## `gitmedic {name}`" in page


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("reference"))
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for name in ("config", "detectors", "cli"):
        (tmp_path / "docs/reference").mkdir(exist_ok=True)
        (tmp_path / f"docs/reference/{name}.md").write_text(f"# {name}\n")
    (tmp_path / "docs/index.md").write_text("# x\n\n[gone](nowhere.md)\n")
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "s")]
    done = subprocess.run(build, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode != 0
    assert "nowhere.md" in done.stdout + done.stderr
