"""The real-world corpus through the real `gitmedic detect` (one subprocess per app).

Each app's result must match its golden file (tests/corpus/golden/<app>.yaml): a new
critical (or any finding) the golden does not hold fails, as does a traceback, an
exit 2 on these valid manifests, and a critical or warning with no verdict and reason.
``GITMEDIC_CORPUS_UPDATE=1`` rewrites the goldens first, keeping their judgements.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.corpus.golden import (
    CorpusApp,
    differences,
    load_apps,
    load_golden,
    regenerate,
    run_detect,
    unjudged,
    update_mode,
    write_golden,
)
from tests.support.real_charts import seed_chart_cache
from tests.support.tools import tool_path

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def detect_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a user with the pinned helm on PATH, offline, whose chart cache
    holds the packages of the charts the Flux apps take from remote repositories, added
    with ``gitmedic charts add`` (tests/fixtures/charts: the real charts, pinned)."""
    helm_dir = str(Path(tool_path("helm")).parent)
    cache = tmp_path_factory.mktemp("chart-cache")
    env = {
        **os.environ,
        "PATH": f"{helm_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITMEDIC_CHART_CACHE": str(cache),
    }
    seed_chart_cache(env, tmp_path_factory.mktemp("chart-packages"))
    return env


@pytest.mark.parametrize("app", load_apps(), ids=lambda a: a.name)
def test_detect_matches_golden(app: CorpusApp, detect_env: dict[str, str]) -> None:
    run = run_detect(app, detect_env)
    assert "Traceback" not in run.stderr, f"{app.name}: traceback\n{run.stderr[-3000:]}"
    golden = load_golden(app)
    if update_mode():
        golden = regenerate(app, run, golden)
        write_golden(app, golden)
    assert golden is not None, f"{app.golden} is missing: run with GITMEDIC_CORPUS_UPDATE=1"
    diffs = differences(golden, run)
    assert not diffs, f"{app.name} differs from {app.golden.name} (review, then regenerate):\n" + (
        "\n".join(diffs)
    )
    missing = unjudged(golden)
    assert not missing, f"{app.golden.name}: unjudged entries:\n" + "\n".join(missing)
    errors = [f"{e['file']}:{e['line']}: {e['message']}" for e in run.errors[:3]]
    assert run.exit_code != 2, f"{app.name}: exit 2 on valid input: {errors}"


SERVICE_SELECTING_NOTHING = """\
apiVersion: v1
kind: Service
metadata: {name: ballot}
spec:
  selector: {app: vote, role: web}
  ports: [{port: 80, targetPort: 80}]
"""


def test_a_new_critical_in_a_corpus_app_fails_against_its_golden(
    tmp_path: Path, detect_env: dict[str, str]
) -> None:
    """The tier can fail: voting-app plus a Service that selects no pod is a new critical.

    Its selector shares app=vote with the vote Deployment but asks a label no pod carries:
    a typo the manifests alone prove, so a critical (a selector naming nothing of the app
    could select pods from elsewhere, a warning).
    """
    app = next(a for a in load_apps() if a.name == "voting-app")
    shutil.copytree(app.root, tmp_path / app.name)
    (tmp_path / app.name / app.path / "ballot-service.yaml").write_text(SERVICE_SELECTING_NOTHING)
    golden = load_golden(app)
    assert golden is not None
    run = run_detect(replace(app, corpus=tmp_path), detect_env)
    rule = "service-selector-unmatched/service-selector-unmatched"
    expected = f"new critical: {rule} Service/{app.namespace}/ballot"
    diffs = differences(golden, run)
    assert any(d.startswith(expected) for d in diffs), diffs
