"""Running the webhook app in-process (FastAPI TestClient) against a LocalForge scene."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from gitmedic.bot.commands.actions import BotActions
from gitmedic.bot.service.settings import git_changed_files
from gitmedic.bot.service.webhook.app import create_app
from gitmedic.bot.service.webhook.deliveries import SeenElsewhere
from gitmedic.bot.service.webhook.handlers import Deps
from gitmedic.bot.service.webhook.service import Service, ServiceConfig
from tests.bot.fakes import Scene

SECRET = "whsec-test-7d1e4c"
_DELIVERY_IDS = itertools.count(1)


@dataclass
class Bot:
    client: TestClient
    service: Service

    def post(
        self,
        event: str,
        payload: Any,
        *,
        delivery: str | None = None,
        secret: str = SECRET,
        signature: str | None = None,
        raw: bytes | None = None,
    ) -> httpx.Response:
        from gitmedic.bot.service.webhook.signature import sign

        body = raw if raw is not None else json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or f"delivery-{next(_DELIVERY_IDS)}",
            "Content-Type": "application/json",
            "X-Hub-Signature-256": signature if signature is not None else sign(secret, body),
        }
        if signature == "":
            del headers["X-Hub-Signature-256"]
        return self.client.post("/webhooks/github", content=body, headers=headers)

    def settle(self) -> None:
        assert self.service.worker.wait_idle(20), "the worker did not drain its queue"


def make_service(
    scene: Scene,
    actions: BotActions,
    state_dir: Path,
    *,
    seen: SeenElsewhere | None = None,  # a shared journal's record of deliveries
    **config: Any,
) -> Service:
    deps = Deps(scene.forge, actions, git_changed_files(scene.repo), ("apps/web",))
    return Service(ServiceConfig(SECRET, state_dir, **config), deps, seen=seen)


@contextmanager
def running(service: Service) -> Iterator[Bot]:
    with TestClient(create_app(service)) as client:
        yield Bot(client, service)
