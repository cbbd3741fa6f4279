"""``gitmedic serve`` in a subprocess: /healthz follows the monitor, /metrics has each app.

The monitor steps every second here, and ``/healthz`` allows three intervals
without progress. While the repository can be read the monitor makes progress;
once its ``.git`` is gone every step fails, and ``/healthz`` turns 503 naming
the stall, so the kubelet would restart the pod. Bounds are generous: the test
waits for a state, it does not time one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.bot.fakes import scene
from tests.security.serve_proc import serve

pytestmark = pytest.mark.integration


def _until(check: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.25)
    return False


def test_healthz_fails_once_the_monitor_stops_making_progress(tmp_path: Path) -> None:
    world = scene(tmp_path)
    env = {"GITMEDIC_HEALTH_STALL_INTERVALS": "3"}
    with serve(world.repo, tmp_path / "state", env, interval=1) as served:
        metrics = f"{served.url}/metrics"
        evaluated = re.compile(
            r"^gitmedic_app_last_evaluation_timestamp_seconds\{app=\"(\S+)\"\} (\S+)$", re.M
        )

        def app_evaluated() -> bool:
            found = evaluated.search(httpx.get(metrics, timeout=10).text)
            return found is not None and float(found.group(2)) > 1.6e9

        assert _until(app_evaluated, 60), httpx.get(metrics, timeout=10).text[-2000:]
        healthz = httpx.get(f"{served.url}/healthz", timeout=10)
        assert (healthz.status_code, healthz.json()) == (200, {"status": "ok"})

        shutil.move(world.repo / ".git", tmp_path / "git-moved")  # every step now fails
        assert _until(lambda: httpx.get(f"{served.url}/healthz", timeout=10).status_code == 503, 90)
        answer = httpx.get(f"{served.url}/healthz", timeout=10).json()
        assert answer["status"] == "stalled" and "made no progress" in answer["reason"]
        assert httpx.get(f"{served.url}/readyz", timeout=10).status_code == 200  # still serving


def test_a_notification_url_that_is_not_https_is_refused_at_start(tmp_path: Path) -> None:
    world = scene(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitmedic",
            "serve",
            "--forge",
            "local",
            "--cluster",
            "sim",
            "--repo",
            str(world.repo),
            "--state-dir",
            str(tmp_path / "state"),
            "--port",
            "9",
        ],
        env={
            **os.environ,
            "GITMEDIC_WEBHOOK_SECRET": "s3cret-for-the-test",
            "GITMEDIC_NOTIFY_URL": "http://hooks.example.com/services/T/B/x",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "GITMEDIC_NOTIFY_URL must be an https:// URL" in done.stderr
