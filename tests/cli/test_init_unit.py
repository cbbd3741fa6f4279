"""The Action ref ``gitmedic init`` writes: a release's own tag, never one that does not exist."""

from __future__ import annotations

import pytest

from gitmedic.bot.cli.init import action_ref


@pytest.mark.parametrize(
    ("version", "ref"),
    [
        ("0.2.0", "v0.2.0"),
        ("1.10.3", "v1.10.3"),
        ("0.2.1.dev14+g1a2b3c4", "main"),  # commits after a tag: no tag names them
        ("0.1.dev600+g93db7b1", "main"),
        ("0+unknown", "main"),
    ],
)
def test_a_release_pins_its_tag_and_anything_else_follows_main(version: str, ref: str) -> None:
    assert action_ref(version) == ref
