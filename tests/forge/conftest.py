"""The ``backend`` fixture: every contract test runs once per forge in ``BACKENDS``."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.reconciler.forge import Forge
from tests.forge.backends import BACKENDS, Backend


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BACKENDS[request.param](tmp_path)


@pytest.fixture
def forge(backend: Backend) -> Forge:
    """The backend's forge, for tests that need no scene-setting."""
    return backend.forge
