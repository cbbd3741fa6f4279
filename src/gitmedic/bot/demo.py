"""``gitmedic demo``: the bundled example shop, a bad commit, and what gitmedic sees.

It builds a throw-away manifest repo from the example app shipped with gitmedic,
commits a healthy baseline, then a commit that breaks the catalog Service's
targetPort (SREGym's service-target-port fault), and runs desired-state
detection on both revisions, exactly as ``gitmedic detect --rev`` does.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from gitmedic.bot.cli import EXIT_OK
from gitmedic.bot.detect_cmd import Report, collect, render

EXAMPLE = "shop"
NAMESPACE = "shop"


def example_app_dir() -> Path:
    return Path(str(resources.files("gitmedic") / "examples" / EXAMPLE))


def run_demo(args: argparse.Namespace) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="gitmedic-demo-"))
    repo = workdir / "manifests"
    shutil.copytree(example_app_dir(), repo / "apps" / EXAMPLE)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop: initial manifests")
    catalog = repo / "apps" / EXAMPLE / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace("targetPort: 3550", "targetPort: 3551", 1))
    _git(repo, "commit", "-q", "-am", "catalog: move to the new port")
    out = sys.stdout
    out.write(f"gitmedic demo: example app '{EXAMPLE}' in {repo}\n\n")
    for rev, title in (("HEAD~1", "baseline"), ("HEAD", "after 'catalog: move to the new port'")):
        report = _detect(repo, rev)
        out.write(f"== {title} ({rev})\n{render(report, 'text')}\n")
    out.write(f"The repo stays for you to inspect: git -C {repo} log -p\n")
    return EXIT_OK


def _detect(repo: Path, rev: str) -> Report:
    from gitmedic.bot.cli import build_parser
    from gitmedic.detectors.builtin import builtin_registry

    args = build_parser().parse_args(
        ["detect", str(repo / "apps" / EXAMPLE), "--rev", rev, "--namespace", NAMESPACE]
    )
    return collect(args, builtin_registry())


def _git(repo: Path, *argv: str) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=gitmedic demo",
         "-c", "user.email=demo@gitmedic.invalid", *argv],
        check=True,
    )  # fmt: skip
