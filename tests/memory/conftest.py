"""The scripted LLM has no price: litellm's cost lookup is replaced by a free one.

``run_agent`` prices every response through ``litellm.completion_cost``; importing
litellm takes seconds per test process, and a scripted provider has no price.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def free_completions(monkeypatch: pytest.MonkeyPatch) -> None:
    def completion_cost(**kw: Any) -> float:
        return 0.0

    monkeypatch.setitem(sys.modules, "litellm", SimpleNamespace(completion_cost=completion_cost))
