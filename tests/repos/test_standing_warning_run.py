"""A warning the app has always had keeps ``run --once`` unhealthy until a person accepts it.

podinfo's chart lets every rollout of its one replica take the pod down
(``rollout-strategy-unsafe``, a warning written in the chart's template, which
no values fix can clear). The loop opens an incident for it and escalates it
to a person (an issue, no pull request), and ``run --once`` exits 1 while that
issue waits: ``healthy`` means nothing is left for a person, as ``detect``
fails on a warning by default. Accepted in the config (a detector excluded,
as the team decides), the same app runs healthy and exits 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifests.helpers import commit_all, git, write
from tests.repos.conftest import CHART_WARNING, gitmedic
from tests.repos.test_flux_overlay_values import CONFIG, flux_repo

ACCEPTED = f"{CONFIG}detectors:\n  exclude: [{CHART_WARNING}]\n"


def run_json(repo: Path) -> tuple[int, dict[str, object]]:
    run = gitmedic("run", repo, "--cluster", "sim", "--forge", "local", "--once", "--json")
    assert run.rc in (0, 1), run.err[-3000:]
    return run.rc, run.json()


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_the_chart_s_standing_warning_is_escalated_and_the_run_is_unhealthy(
    tmp_path: Path,
) -> None:
    repo = flux_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    rc, report = run_json(repo)
    assert (rc, report["healthy"]) == (1, False)
    incidents = report["incidents"]
    # run acts on every app: each environment renders the chart, each has the warning
    assert isinstance(incidents, list) and len(incidents) == 2
    for incident in incidents:
        assert {f["detector"] for f in incident["findings"]} == {CHART_WARNING}
        assert incident["transactions"] == []  # escalated to a person: no pull request
    apps = report["apps"]
    assert isinstance(apps, list)
    assert [(a["app"], a["healthy"], len(a["incidents"])) for a in apps] == [
        ("staging", False, 1),
        ("production", False, 1),
    ]
    assert git(repo, "rev-parse", "main") == head


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
def test_the_warning_accepted_in_the_config_leaves_the_run_healthy(tmp_path: Path) -> None:
    repo = flux_repo(tmp_path)
    write(repo, {".gitmedic/config.yaml": ACCEPTED})
    head = commit_all(repo, "gitmedic: the chart's rollout strategy is accepted")
    rc, report = run_json(repo)
    apps = [{"app": env, "healthy": True, "incidents": []} for env in ("staging", "production")]
    assert (rc, report) == (0, {"healthy": True, "incidents": [], "apps": apps})
    assert git(repo, "rev-parse", "main") == head
