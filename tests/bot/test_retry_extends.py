"""A candidate that regresses is reverted, and the retry fixes what it uncovered.

A release lands as two commits: a new entrypoint, then an image tag that was
never pushed. The pods cannot pull the image; restoring the image alone lets
the old image try the new entrypoint, which it does not have, and the pods
crash-loop. The loop sees the crash loop while the candidate still runs, the
transaction reverts it, and the retry keeps the image restore and also restores
the entrypoint, which commits: main ends byte-identical to the healthy release.
Reflection learns that lesson in the repo, so the same fault on another
service is fixed at the first attempt, by the learned playbook, with no revert.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitmedic.bot.controller.loop import Loop, LoopConfig
from gitmedic.bot.controller.report import Event
from gitmedic.bot.controller.sim_cluster import SimCluster
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Proposal
from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler.config import DEFAULT_POLICY
from gitmedic.reconciler.forge import PrFilter
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.transaction import Journal
from tests.conftest import APPS
from tests.transaction.e2e_world import APP, NAMESPACE, baseline_repo, git

BOUTIQUE = APPS / "online-boutique" / "release" / "kubernetes-manifests.yaml"
CATALOG_IMAGE = "microservices-demo/productcatalogservice:v0.10.6"


def _release_in_two_commits(repo: Path, app: Path, old: str, new: str, entry: str) -> Path:
    """The entrypoint commit, then the image bump (the cluster ran neither); the file."""
    file = next(f for f in sorted(app.glob("*.yaml")) if old in f.read_text())
    text = file.read_text()
    start = text.rindex("\n", 0, text.index(old)) + 1
    end = text.index("\n", start) + 1
    line = text[start:end]
    indent = line[: len(line) - len(line.lstrip())]
    file.write_text(text[:end] + f"{indent}command: {entry}\n" + text[end:])
    git(repo, "commit", "-qam", "release: the new entrypoint")
    file.write_text(file.read_text().replace(old, new, 1))
    git(repo, "commit", "-qam", "release: bump the image")
    return file


def _shop(tmp_path: Path) -> tuple[Path, str, str, Path]:
    repo = baseline_repo(tmp_path)
    return repo, APP, NAMESPACE, repo / APP / "catalog.yaml"


def _boutique(tmp_path: Path) -> tuple[Path, str, str, Path]:
    repo = tmp_path / "manifests"
    target = repo / "apps" / "boutique" / BOUTIQUE.name
    target.parent.mkdir(parents=True)
    shutil.copy(BOUTIQUE, target)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "boutique: baseline")
    return repo, "apps/boutique", "boutique", target


BOUTIQUE_IMAGE = "microservices-demo/{}:v0.10.6"
RELEASES = {  # app -> (world, [(image, its never-pushed bump, new entrypoint)] on two services)
    "shop": (_shop, [
        ("shop-catalog:2.0.1", "shop-catalog:2.1.0", '["/catalog", "--grpc"]'),
        ("shop-checkout:1.3.0", "shop-checkout:1.4.0", '["/checkout", "--grpc"]'),
    ]),
    "online-boutique": (_boutique, [
        (CATALOG_IMAGE, CATALOG_IMAGE.replace("v0.10.6", "v0.11.0"), '["/src/server", "--grpc"]'),
        (BOUTIQUE_IMAGE.format("shippingservice"),
         BOUTIQUE_IMAGE.format("shippingservice").replace("v0.10.6", "v0.11.0"),
         '["/src/shippingservice", "--grpc"]'),
    ]),
}  # fmt: skip


def _loop(repo: Path, path: str, namespace: str, app: str, tmp: Path, events: list[Event]) -> Loop:
    from gitmedic.bot.memory.learned import load_learned

    learned = load_learned(repo, builtin_registry())
    healthy = git(repo, "rev-parse", "HEAD~2")  # the cluster ran the release's parent well
    cluster = SimCluster(repo, path, namespace, baseline_rev=healthy)
    config = LoopConfig(app, repo, path, namespace, policy=DEFAULT_POLICY)
    return Loop(config, cluster, LocalForge(repo), Journal(tmp / "j.sqlite"),
                list(learned.registry), on_event=events.append)  # fmt: skip


@pytest.mark.integration
@pytest.mark.parametrize("app", sorted(RELEASES))
def test_the_undone_candidate_is_kept_and_what_it_caused_is_fixed_on_retry(
    tmp_path: Path, app: str
) -> None:
    world, releases = RELEASES[app]
    repo, path, namespace, file = world(tmp_path)
    original = file.read_bytes()
    assert _release_in_two_commits(repo, file.parent, *releases[0]) == file
    events: list[Event] = []
    loop = _loop(repo, path, namespace, app, tmp_path, events)

    assert loop.run_once() is True
    (report,) = loop.reports.values()
    assert [t.outcome.value for t in report.transactions] == ["reverted", "committed"]
    ((txn, caused),) = report.caused.items()
    assert txn == report.transactions[0].plan.txn_id
    assert {f.detector for f in caused} >= {"pod-crashloop"}
    assert [e for e in events if e.kind == "caused"]
    first, second = report.transactions
    assert len(second.plan.edits) > len(first.plan.edits)
    assert all(e in second.plan.edits for e in first.plan.edits), "the undone change is kept"
    assert (
        "## Summary\n\nThe previous candidate cleared its targets but, once deployed, caused "
        "pod-crashloop" in second.plan.body
    )
    relative = str(file.relative_to(repo))
    assert git(repo, "show", f"main:{relative}") + "\n" == original.decode()
    assert not report.escalated
    forge = LocalForge(repo)
    reverts = [p for p in forge.list_prs(PrFilter.ALL) if p.title.startswith("Revert")]
    assert len(reverts) == 1
    learned = git(repo, "ls-tree", "-r", "--name-only", "main", ".gitmedic/").split()
    assert ".gitmedic/playbooks/pod-image-pull-with-command/README.md" in learned
    assert ".gitmedic/rules/learned-pod-image-pull-with-command.yaml" in learned

    # The same fault class on another service: the lesson makes the first candidate right.
    git(repo, "checkout", "-q", "main")
    git(repo, "reset", "-q", "--hard", "main")
    file = _release_in_two_commits(repo, file.parent, *releases[1])
    relative = str(file.relative_to(repo))
    original = git(repo, "show", f"HEAD~2:{relative}").encode() + b"\n"  # before the release
    again = _loop(repo, path, namespace, app, tmp_path / "again", events)
    assert again.run_once() is True
    (report,) = again.reports.values()
    assert [t.outcome.value for t in report.transactions] == ["committed"]
    assert report.transactions[0].plan.tokens == 0
    assert "learned-pod-image-pull-with-command" in report.transactions[0].plan.body
    assert git(repo, "show", f"main:{relative}") + "\n" == original.decode()


def test_extend_gives_up_when_the_undone_edits_no_longer_apply(tmp_path: Path) -> None:
    repo, path, namespace, _ = _shop(tmp_path)
    ref = Resource("Deployment", namespace, "catalog")
    image = parse_path("spec.template.spec.containers[name=server].image")
    stale = Edit(Op.SET, f"{path}/catalog.yaml", ref, image, "ghcr.io/gitmedic/shop-catalog:1.0")
    stale = stale.with_base("0" * 40)  # made against a content main no longer has
    undone = Proposal("i-1", "playbook", edits=(stale,), diagnosis="restore the image")
    crash = Finding("pod-crashloop", "crashloop", Severity.CRITICAL, ref,
                    "container server is crash-looping",
                    params={"container": "server", "reason": "Error"})  # fmt: skip
    incident = Incident("i-1", "shop", opened_at=0.0, findings=(crash,))
    responder = Responder(ManifestRepo(repo, path, namespace))

    assert responder.extend(incident, undone, (crash,)) is None
