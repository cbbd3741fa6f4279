"""``gitmedic demo``: the whole loop on the bundled example shop, on a laptop, in seconds.

In a temporary workspace it builds a manifest repo from the example app shipped
with gitmedic, commits a healthy baseline, and runs the real loop (monitor,
responder, policy, transactions, memory) with the sim as cluster and GitOps
engine and the local forge, on the sim's fake clock. Stories, each a real run:

(a) a bad commit breaks the catalog Service's targetPort: the bot detects it,
    opens a PR, gates, auto-merges, waits for the sync, verifies and commits,
    then writes memory;
(d) a runtime-only fault (the database revoked the payment service's
    credentials; nothing in Git changed): the bot escalates in an issue and
    opens no pull request.

The timeline prints live (rich); the summary gives time to resolution in
simulated seconds, PRs, reverts and tokens, and ``summary.json`` next to the
repo holds the same for scripts and tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

EXAMPLE = "shop"
NAMESPACE = "shop"
APP_PATH = f"apps/{EXAMPLE}"
IDENT = ["-c", "user.name=Alice", "-c", "user.email=alice@example.com"]


def example_app_dir() -> Path:
    return Path(str(resources.files("gitmedic") / "examples" / EXAMPLE))


def run_demo(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(highlight=False)
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="gitmedic-demo-"))
    repo = workdir / "manifests"
    shutil.copytree(example_app_dir(), repo / APP_PATH)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop: initial manifests")
    console.print(f"[bold]gitmedic demo[/]: the example shop in {repo}\n", soft_wrap=True)
    stories = [
        story_bad_commit(repo, workdir, console),
        story_runtime_fault(repo, workdir, console),
    ]
    summary = {
        "repo": str(repo),
        "stories": stories,
        "wall_s": round(time.monotonic() - started, 1),
    }
    (workdir / "summary.json").write_text(json.dumps(summary, indent=1))
    _print_summary(console, summary)
    return 0


def story_bad_commit(repo: Path, workdir: Path, console: Any) -> dict[str, Any]:
    console.rule("(a) a bad commit lands")
    catalog = repo / APP_PATH / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace("targetPort: 3550", "targetPort: 3551", 1))
    _git(repo, "commit", "-q", "-am", "catalog: move to the new port")
    console.print("  Alice commits 'catalog: move to the new port' (targetPort 3550 -> 3551)")
    return _play("a", repo, workdir, console)


def story_runtime_fault(repo: Path, workdir: Path, console: Any) -> dict[str, Any]:
    from gitmedic.sim.faults.runtime import database_auth_revoked

    console.rule("(d) a runtime-only fault: nothing changed in Git")
    console.print("  the database drops the payment service's user (a B-class fault)")
    return _play(
        "d", repo, workdir, console, perturb=lambda sim: database_auth_revoked(sim, "payment")
    )


def _play(
    name: str, repo: Path, workdir: Path, console: Any, perturb: Any = None
) -> dict[str, Any]:
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.bot.loop.loop import Event, Loop, LoopConfig
    from gitmedic.bot.loop.sim_cluster import SimCluster
    from gitmedic.bot.run_cmd import DEFAULT_POLICY
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.forge import PrFilter
    from gitmedic.reconciler.transaction import Journal

    cluster = SimCluster(repo, APP_PATH, NAMESPACE)
    if perturb is not None:
        perturb(cluster.sim)
    start = cluster.clock.now()

    def show(e: Event) -> None:
        console.print(f"  [dim]t+{e.at - start:5.0f}s[/] [cyan]{e.kind:<9}[/] {e.text[:110]}")

    forge = LocalForge(repo)
    before = len(forge.list_prs(PrFilter.ALL))
    config = LoopConfig(EXAMPLE, repo, APP_PATH, NAMESPACE, policy=DEFAULT_POLICY)
    journal = Journal(workdir / "journal.sqlite")
    loop = Loop(config, cluster, forge, journal, list(builtin_registry()), on_event=show)
    healthy = loop.run_once()
    reports = list(loop.reports.values())
    txns = [t for r in reports for t in r.transactions]
    resolved = [r.resolved_at - r.incident.opened_at for r in reports if r.resolved_at]
    return {
        "story": name,
        "healthy": healthy,
        "outcomes": [t.outcome.value for t in txns],
        "escalated": [r.escalated for r in reports if r.escalated],
        "prs": len(forge.list_prs(PrFilter.ALL)) - before,
        "reverts": sum(1 for t in txns if t.revert_pr),
        "tokens": sum(t.plan.tokens for t in txns),
        "resolution_s": resolved,
    }


def _print_summary(console: Any, summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="summary (simulated seconds)")
    for col in ("story", "outcome", "time to resolution", "PRs", "reverts", "tokens"):
        table.add_column(col)
    for s in summary["stories"]:
        outcome = ", ".join(s["outcomes"]) or ("escalated, no PR" if s["escalated"] else "-")
        ttr = ", ".join(f"{t:.0f}s" for t in s["resolution_s"]) or "-"
        table.add_row(s["story"], outcome, ttr, str(s["prs"]), str(s["reverts"]), str(s["tokens"]))
    console.print(table)
    console.print(f"wall time {summary['wall_s']}s. The story in Git: "
                  f"git -C {summary['repo']} log --graph --oneline", soft_wrap=True)  # fmt: skip


def _git(repo: Path, *argv: str) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-C", str(repo), *IDENT, *argv], check=True, capture_output=True)
