"""Running ``gitmedic`` in-process, and a real app with faults injected into a copy."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.cli.main import main
from tests.conftest import APPS

BOUTIQUE_RELEASE = APPS / "online-boutique/release/kubernetes-manifests.yaml"
# (old, new) pairs, each found exactly once in the boutique release file.
BOUTIQUE_FAULTS = {
    # the frontend Service (line 114) selects no pods
    "selector": (
        "  type: ClusterIP\n  selector:\n    app: frontend\n",
        "  type: ClusterIP\n  selector:\n    app: frontend-v2\n",
    ),
    # the adservice Service (line 204) targets a port no container serves
    "target-port": (
        "    port: 9555\n    targetPort: 9555\n",
        "    port: 9555\n    targetPort: 9556\n",
    ),
    # the frontend Deployment declares PORT twice
    "env-duplicate": (
        '          env:\n          - name: PORT\n            value: "8080"\n',
        '          env:\n          - name: PORT\n            value: "8080"\n'
        '          - name: PORT\n            value: "8081"\n',
    ),
}


@dataclass(frozen=True)
class Result:
    rc: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Cli = Callable[..., Result]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    def run(*argv: str | Path) -> Result:
        capsys.readouterr()
        rc = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run


def inject(text: str, *faults: str) -> str:
    for fault in faults:
        old, new = BOUTIQUE_FAULTS[fault]
        assert text.count(old) == 1, fault
        text = text.replace(old, new)
    return text


def faulty_boutique(dest: Path, *faults: str) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(inject(BOUTIQUE_RELEASE.read_text(), *faults))
    return dest
