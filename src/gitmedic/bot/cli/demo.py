"""``gitmedic demo``: the whole loop on the bundled example shop, on a laptop, in seconds.

In a temporary workspace it builds a manifest repo from the example app shipped
with gitmedic, commits a healthy baseline, and runs the real loop (monitor,
responder, policy, transactions, memory) with the sim as cluster and GitOps
engine and the local forge, on the sim's fake clock. Stories, each a real run:

(a) a bad commit breaks the catalog Service's targetPort: the bot detects it,
    opens a PR, gates, auto-merges, waits for the sync, verifies and commits,
    then writes memory;
(b) a release lands as two commits, the new entrypoint and then the bump to a
    tag that was never pushed: the pods cannot pull it. The first candidate
    restores the image alone; deployed, the old image cannot run the new
    entrypoint and crash-loops, so the transaction reverts it as soon as the
    crash outlasts the failure limit (fail fast, long before the sync would
    time out). The retry keeps
    that change and also fixes what it caused (the entrypoint restored by the
    wrong-command playbook), and that commits;
(c) the same fault class again on another service (a checkout release, again an
    entrypoint and an unpushed tag): reflection after (b) learned that lesson
    in the repo (``.gitmedic/``: a CEL rule refining ``pod-image-pull`` to a
    container that also overrides its entrypoint, and a playbook restoring image
    and command together), so the first candidate is right: no revert, zero tokens, no
    LLM involved; the timeline names the learned playbook and the incident in
    the outcome records (``.gitmedic/outcomes.jsonl``) it was learned from;
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
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from gitmedic.bot.cli.console import Console, literal
from gitmedic.reconciler import gitcmd

EXAMPLE = "shop"
NAMESPACE = "shop"
APP_PATH = f"apps/{EXAMPLE}"
IDENT = {
    "GIT_AUTHOR_NAME": "Alice",
    "GIT_AUTHOR_EMAIL": "alice@example.com",
    "GIT_COMMITTER_NAME": "Alice",
    "GIT_COMMITTER_EMAIL": "alice@example.com",
}


def example_app_dir() -> Path:
    return Path(str(resources.files("gitmedic") / "examples" / EXAMPLE))


def run_demo(args: argparse.Namespace) -> int:
    from gitmedic.bot.common.extras import MEMORY_ENGINE, require

    require(MEMORY_ENGINE)  # story (c) is fixed from what story (b) taught
    console = Console()
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="gitmedic-demo-"))
    repo = workdir / "manifests"
    shutil.copytree(example_app_dir(), repo / APP_PATH)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "shop: initial manifests")
    console.print(f"[bold]gitmedic demo[/]: the example shop in {literal(str(repo))}\n")
    stories = [
        story_bad_commit(repo, workdir, console),
        story_revert_then_retry(repo, workdir, console),
        story_same_class_again(repo, workdir, console),
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


def story_revert_then_retry(repo: Path, workdir: Path, console: Any) -> dict[str, Any]:
    console.rule("(b) a release whose first candidate fix regresses")
    healthy = _git_out(repo, "rev-parse", "HEAD")
    catalog = repo / APP_PATH / "catalog.yaml"
    entry = '          command: ["/catalog", "serve", "--grpc"]\n          ports:'
    catalog.write_text(catalog.read_text().replace("          ports:", entry, 1))
    _git(repo, "commit", "-q", "-am", "catalog: the gRPC entrypoint of 2.1.0")
    catalog.write_text(catalog.read_text().replace("shop-catalog:2.0.1", "shop-catalog:2.1.0", 1))
    _git(repo, "commit", "-q", "-am", "catalog: release 2.1.0")
    console.print(
        "  Carol pushes 'catalog: the gRPC entrypoint of 2.1.0' and 'catalog: release 2.1.0' "
        "(the 2.1.0 tag was never pushed; 2.0.1 cannot run the new entrypoint)"
    )
    # The images (and entrypoints) that ran are those of the revision the cluster ran healthy.
    return _play("b", repo, workdir, console, baseline=healthy)


def story_same_class_again(repo: Path, workdir: Path, console: Any) -> dict[str, Any]:
    console.rule("(c) the same fault class again, on another service")
    healthy = _git_out(repo, "rev-parse", "HEAD")
    checkout = repo / APP_PATH / "checkout.yaml"
    image = "          image: ghcr.io/gitmedic/shop-checkout:1.3.0\n"
    entry = '          command: ["/checkout", "--grpc"]\n'
    checkout.write_text(checkout.read_text().replace(image, image + entry, 1))
    _git(repo, "commit", "-q", "-am", "checkout: the gRPC entrypoint of 1.4.0")
    checkout.write_text(checkout.read_text().replace("shop-checkout:1.3.0", "shop-checkout:1.4.0"))
    _git(repo, "commit", "-q", "-am", "checkout: release 1.4.0")
    console.print(
        "  Bob pushes 'checkout: the gRPC entrypoint of 1.4.0' and 'checkout: release "
        "1.4.0' (1.4.0 was never pushed either)"
    )
    seen = _remembered(repo)
    story = _play("c", repo, workdir, console, baseline=healthy)
    story["from_memory"] = _from_memory(repo, story, seen)
    console.print(f"  [magenta]memory   [/] {literal(story['from_memory'])}")
    return story


def _remembered(repo: Path) -> dict[str, str]:
    """Playbook -> the incident that wrote it (or whose fix it made), from the outcome records."""
    text = _git_out(repo, "show", "main:.gitmedic/outcomes.jsonl")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    seen: dict[str, str] = {}
    for r in (r for r in records if r.get("status") == "committed"):
        seen.setdefault(r["classification"], r["id"])
        seen.update({m: r["id"] for m in r.get("memory", ())})
    return seen


def _from_memory(repo: Path, story: dict[str, Any], seen: dict[str, str]) -> str:
    """How the story's fix came from memory, or why it did not (said, never assumed)."""
    used = [p for p in story["playbooks"] if p]
    known = [p for p in used if p in seen]
    if not known or story["tokens"] or story["outcomes"][-1:] != ["committed"]:
        return f"not from memory (playbooks {used}, {story['tokens']} tokens)"
    book = known[0]
    if not _git_out(repo, "ls-tree", "-d", "main", f".gitmedic/playbooks/{book}"):
        return (
            f"fixed with 0 tokens by the built-in playbook {book}, which also fixed "
            f"incident {seen[book]} (.gitmedic/outcomes.jsonl)"
        )
    first = "at the first attempt" if not story["reverts"] else "after a revert"
    return (
        f"fixed from memory {first} with 0 tokens, by learned playbook {book} "
        f"(.gitmedic/playbooks/{book}), written by reflection after incident {seen[book]}"
    )


def story_runtime_fault(repo: Path, workdir: Path, console: Any) -> dict[str, Any]:
    from gitmedic.sim.faults.runtime import database_auth_revoked

    console.rule("(d) a runtime-only fault: nothing changed in Git")
    # The cluster ran HEAD healthy (story (c) verified it): what its workloads run is known
    # good, so the evidence names the injected cause, not a command the sim never saw run.
    healthy = _git_out(repo, "rev-parse", "HEAD")
    console.print("  the database drops the payment service's user (a B-class fault)")
    return _play(
        "d",
        repo,
        workdir,
        console,
        perturb=lambda sim: database_auth_revoked(sim, "payment"),
        baseline=healthy,
    )


def _play(
    name: str,
    repo: Path,
    workdir: Path,
    console: Any,
    perturb: Any = None,
    baseline: str | None = None,
) -> dict[str, Any]:
    from gitmedic.bot.controller.loop import Loop, LoopConfig
    from gitmedic.bot.controller.report import Event
    from gitmedic.bot.controller.sim_cluster import SimCluster
    from gitmedic.bot.forges.local import LocalForge
    from gitmedic.bot.memory.learned import load_learned
    from gitmedic.detectors.builtin import builtin_registry
    from gitmedic.reconciler.config import DEFAULT_POLICY
    from gitmedic.reconciler.forge import PrFilter
    from gitmedic.reconciler.transaction import Journal

    cluster = SimCluster(repo, APP_PATH, NAMESPACE, baseline_rev=baseline)
    if perturb is not None:
        perturb(cluster.sim)
    start = cluster.clock.now()
    playbooks: list[str] = []

    def show(e: Event) -> None:
        if e.kind == "proposal":
            playbooks.append(e.data.get("playbook") or "")
        if e.kind == "measure":  # the window's measurements: the outcome line tells them
            return
        console.print(
            f"  [dim]t+{e.at - start:5.0f}s[/] [cyan]{e.kind:<9}[/] {literal(e.text[:110])}"
        )

    forge = LocalForge(repo)
    before = len(forge.list_prs(PrFilter.ALL))
    config = LoopConfig(EXAMPLE, repo, APP_PATH, NAMESPACE, policy=DEFAULT_POLICY)
    journal = Journal(workdir / "journal.sqlite")
    learned = load_learned(repo, builtin_registry())  # memory so far: CEL rules, data
    loop = Loop(config, cluster, forge, journal, list(learned.registry), on_event=show)
    try:
        healthy = loop.run_once()
    finally:  # the next story's loop is another writer of the same app
        loop.lease.release()
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
        "playbooks": playbooks,
        "resolution_s": resolved,
    }


def _print_summary(console: Any, summary: dict[str, Any]) -> None:
    rows = []
    for s in summary["stories"]:
        outcome = ", ".join(s["outcomes"]) or ("escalated, no PR" if s["escalated"] else "-")
        ttr = ", ".join(f"{t:.0f}s" for t in s["resolution_s"]) or "-"
        rows.append((s["story"], outcome, ttr, str(s["prs"]), str(s["reverts"]), str(s["tokens"])))
    columns = ("story", "outcome", "time to resolution", "PRs", "reverts", "tokens")
    console.table("summary (simulated seconds)", columns, rows)
    repo = literal(summary["repo"])
    console.print(
        f"wall time {summary['wall_s']}s. The story in Git: git -C {repo} log --graph --oneline"
    )


def _git(repo: Path, *argv: str) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    gitcmd.output(repo, argv[0], *argv[1:], env=IDENT)


def _git_out(repo: Path, *argv: str) -> str:
    """What git prints, or nothing when it fails (a path main does not have)."""
    proc = gitcmd.run(repo, argv[0], *argv[1:])
    return proc.stdout.strip() if proc.returncode == 0 else ""
