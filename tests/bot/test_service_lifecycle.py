"""The service around the endpoint: health, readiness, resuming its queue, logs, the CLI."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from gitmedic.bot.cli.main import main
from gitmedic.bot.service.webhook.deliveries import Delivery
from gitmedic.bot.service.webhook.logs import configure_logging
from gitmedic.reconciler.redact import REGISTRY
from tests.bot import payloads
from tests.bot.fakes import FakeActions, scene
from tests.bot.service_kit import make_service, running


def test_health_and_readiness(tmp_path: Path) -> None:
    service = make_service(scene(tmp_path), FakeActions(), tmp_path / "state")
    assert not service.ready()  # no worker yet
    with running(service) as bot:
        assert bot.client.get("/healthz").json() == {"status": "ok"}
        ready = bot.client.get("/readyz")
        assert (ready.status_code, ready.json()) == (200, {"ready": True})
    assert not service.ready()  # stopped with the app


def test_deliveries_queued_when_the_process_stopped_are_handled_at_start(tmp_path: Path) -> None:
    world, actions = scene(tmp_path), FakeActions()
    service = make_service(world, actions, tmp_path / "state")
    body = json.dumps(payloads.review(world.bot_pr, "maria")).encode()
    assert service.store.accept(Delivery("left-over", "pull_request_review", body), 1.0)
    with running(make_service(world, actions, tmp_path / "state")) as bot:
        bot.settle()
    assert actions.calls == [f"approve #{world.bot_pr}"]
    assert service.store.result("left-over") == ("done", f"#{world.bot_pr} approved by maria")


def test_a_failing_delivery_is_recorded_and_the_worker_goes_on(tmp_path: Path) -> None:
    world, actions = scene(tmp_path), FakeActions()
    with running(make_service(world, actions, tmp_path / "state")) as bot:
        bot.post("pull_request_review", {"action": "submitted"}, delivery="bad")
        bot.post("pull_request_review", payloads.review(world.bot_pr, "maria"), delivery="good")
        bot.settle()
        assert bot.service.store.result("bad") == ("failed", "KeyError: 'review'")
        assert bot.service.store.result("good") is not None
    assert actions.calls == [f"approve #{world.bot_pr}"]


def test_logs_are_json_lines_with_secrets_masked() -> None:
    REGISTRY.add("whsec-very-secret-value")
    stream = io.StringIO()
    handler = configure_logging("info", stream)
    try:
        logging.getLogger("gitmedic.test").info(
            "token whsec-very-secret-value seen", extra={"event": "ping", "delivery": "d-1"}
        )
    finally:
        for name in ("gitmedic", "uvicorn", "uvicorn.error", "uvicorn.access"):
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).propagate = True
    line = json.loads(stream.getvalue())
    assert line["msg"] == "token **** seen"
    assert (line["level"], line["event"], line["delivery"]) == ("info", "ping", "d-1")


def test_serve_refuses_to_start_without_a_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITMEDIC_WEBHOOK_SECRET", raising=False)
    assert main(["serve"]) == 2
    assert "GITMEDIC_WEBHOOK_SECRET is not set" in capsys.readouterr().err


def test_detect_does_not_import_the_web_stack() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from gitmedic.bot.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'prometheus_client') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
