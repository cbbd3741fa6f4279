"""A latency fault end to end, through the real ``gitmedic run`` (sim cluster, local forge).

+500 ms on a service others call (online-boutique's product catalogue), named in
``GITMEDIC_SIM_FAULTS`` as nothing in Git holds it: the sim's ``HighRequestLatency``
fires on the entry points that call it, the run opens an incident from those alerts,
finds no change in the manifests and no lever that explains a slow network, and
escalates: one issue that names the latency and the service behind it, no pull
request, main untouched. With a probe configured with a latency limit the answer
is the same (the probe is an oracle of the window; nothing is merged to judge).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.reconciler.forge import IssueState
from gitmedic.reconciler.transaction import Journal
from tests.bot.cli_world import SERVICE, configured_repo, git, prs, run_once

pytestmark = pytest.mark.integration

ENTRY_POINTS = {"frontend", "frontend-external"}  # the Services users call
# appended to the app's entry of .gitmedic/config.yaml (after its engine)
PROBE = (
    "    oracles:\n      probes:\n"
    "        - {url: 'http://frontend.boutique.svc.cluster.local/', max_latency_ms: 200}\n"
)


@pytest.mark.parametrize("config", ["", PROBE], ids=["alerts", "alerts-and-a-latency-probe"])
def test_a_500_ms_delay_on_a_called_service_is_escalated_naming_it_with_no_pr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str
) -> None:
    repo, _, _ = configured_repo(tmp_path, config)
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setenv("GITMEDIC_SIM_FAULTS", f"network-delay:{SERVICE}")

    done = run_once(repo)

    assert done.rc == 1 and "Traceback" not in done.err, done.err
    report = done.json()
    assert report["healthy"] is False
    (incident,) = report["incidents"]
    findings = incident["findings"]
    assert {f["rule"] for f in findings} == {"HighRequestLatency"}
    assert {f["resource"]["name"] for f in findings} == ENTRY_POINTS
    assert all(f"-> {SERVICE}: chaos: 500 ms network delay" in f["evidence"] for f in findings)
    assert incident["transactions"] == [], "nothing to change in Git"
    assert prs(repo) == [] and git(repo, "rev-parse", "main") == head

    row = Journal(repo / ".git" / "gitmedic" / "journal.sqlite").incident(incident["id"])
    assert row is not None and row.status == "escalated", "a person is told"
    issue = LocalForge(repo).get_issue(int(row.data["escalated"].removeprefix("issue #")))
    assert issue.state is IssueState.OPEN
    assert issue.title == f"gitmedic: {incident['id']} needs a person"
    assert "no change to the manifests explains" in issue.body
    assert f"frontend -> {SERVICE}: chaos: 500 ms network delay" in issue.body
    assert "answers in 5" in issue.body and "(baseline " in issue.body, "the latency itself"
    assert "no runtime lever applies" in issue.body
