"""``gitmedic init PATH``: scaffold ``.gitmedic/`` and the GitHub workflow in a manifest repo.

Existing files are never overwritten: init can be re-run after an upgrade to add
what is missing, and says what it created and what it left alone.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from gitmedic.bot.cli import EXIT_OK, UsageError

FILES = {
    ".gitmedic/config.yaml": "config.yaml",
    ".gitmedic/playbooks/README.md": "playbooks-index.md",
    ".github/workflows/gitmedic-detect.yml": "gitmedic-detect.yml",
}


def run_init(args: argparse.Namespace) -> int:
    repo = Path(args.path)
    if not repo.is_dir():
        raise UsageError(f"{repo}: not a directory")
    values = {
        "name": args.name or _app_name(repo),
        "path": (args.app_path or ".").strip("/") or ".",
        "namespace": args.namespace or "default",
    }
    for rel, template in FILES.items():
        target = repo / rel
        if target.exists():
            print(f"kept     {rel} (exists)")
            continue
        text = (resources.files("gitmedic.bot") / "templates" / "init" / template).read_text()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.format(**values) if rel.endswith("config.yaml") else text)
        print(f"created  {rel}")
    outcomes = repo / ".gitmedic" / "outcomes.jsonl"
    if not outcomes.exists():
        outcomes.touch()
        print("created  .gitmedic/outcomes.jsonl")
    return EXIT_OK


def _app_name(repo: Path) -> str:
    name = "".join(c if c.isalnum() else "-" for c in repo.resolve().name.lower()).strip("-")
    return name[:63] or "app"
