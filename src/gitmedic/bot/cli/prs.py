"""``gitmedic prs PATH [--json]``: the pull requests of a repo's local forge.

Read-only: a repo without a local forge yet has no PRs (nothing is created). For
each PR it shows its number, state, branch, title, the statuses on its head and
its labels; ``--json`` prints ``{"prs": [...]}`` with the same facts plus base,
head and merge shas and the bot's hidden state.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gitmedic.bot.common.exits import EXIT_OK, UsageError
from gitmedic.bot.forges.local import LocalForge, forge_database
from gitmedic.reconciler.forge import CommitStatus, NotFound, PrFilter, PullRequest

Listing = list[tuple[PullRequest, tuple[CommitStatus, ...]]]
COLUMNS = ("#", "STATE", "BRANCH", "TITLE", "STATUSES", "LABELS")


def run_prs(args: argparse.Namespace) -> int:
    listing = collect(Path(args.path))
    out = render_json(listing) if args.json else render_text(listing)
    sys.stdout.write(out)
    return EXIT_OK


def collect(path: Path) -> Listing:
    if not path.exists():
        raise UsageError(f"{path} does not exist")
    try:
        if not forge_database(path).exists():
            return []
        forge = LocalForge(path, create=False)
    except NotFound as exc:
        raise UsageError(str(exc)) from None
    return [(pr, forge.get_statuses(pr.head_sha)) for pr in forge.list_prs(PrFilter.ALL)]


def render_json(listing: Listing) -> str:
    prs = [
        {**pr.to_json(), "statuses": [status.to_json() for status in statuses]}
        for pr, statuses in listing
    ]
    return json.dumps({"prs": prs}, indent=2) + "\n"


def render_text(listing: Listing) -> str:
    if not listing:
        return "no pull requests\n"
    rows = [COLUMNS, *(_row(pr, statuses) for pr, statuses in listing)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    return "".join(line.rstrip() + "\n" for line in lines)


def _row(pr: PullRequest, statuses: tuple[CommitStatus, ...]) -> tuple[str, ...]:
    checks = ", ".join(f"{s.context}:{s.state.value}" for s in statuses) or "-"
    return (
        str(pr.number),
        pr.state.value,
        pr.branch,
        pr.title,
        checks,
        ", ".join(pr.labels) or "-",
    )
