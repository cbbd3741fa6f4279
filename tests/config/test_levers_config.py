"""``levers:`` of .gitmedic/config.yaml: the ceilings runtime levers never exceed."""

from __future__ import annotations

from typing import Any

import pytest

from gitmedic.bot.responder.levers import Bounds
from gitmedic.detectors.quantity import GI
from gitmedic.reconciler.config import ConfigError, LeversConfig, parse_config


def _config(levers: Any) -> dict[str, Any]:
    return {"version": 1, "apps": [{"name": "shop", "path": "apps/shop"}], "levers": levers}


def test_the_configured_ceilings_become_the_levers_bounds() -> None:
    config = parse_config(_config({"max_replicas": 4, "memory_ceiling": "2Gi"}))

    assert config.levers == LeversConfig(max_replicas=4, memory_ceiling="2Gi")
    assert Bounds.of(config.levers) == Bounds(memory_ceiling=2 * GI, max_replicas=4)
    assert Bounds.of(parse_config(_config({})).levers) == Bounds()


@pytest.mark.parametrize(
    ("levers", "message"),
    [
        ({"max_replicas": 0}, "levers.max_replicas: 0 is less than the minimum of 1"),
        ({"memory_ceiling": "lots"}, "levers.memory_ceiling: 'lots' does not match"),
        ({"max_pods": 3}, "levers: Additional properties are not allowed ('max_pods'"),
    ],
)
def test_a_bad_ceiling_is_a_clear_error(levers: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="invalid") as err:
        parse_config(_config(levers))
    assert message in str(err.value)
