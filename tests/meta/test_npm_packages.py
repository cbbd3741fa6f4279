"""GitHub's descriptions come from pinned npm packages, checked against their integrity."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.npm_packages import EXAMPLES, package_file


@pytest.mark.integration  # npm pack from the registry
def test_a_package_is_fetched_once_and_a_wrong_integrity_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path))
    index = package_file(EXAMPLES, "api.github.com/index.json")
    assert index.is_relative_to(tmp_path) and json.loads(index.read_text())
    manifest = json.loads((index.parents[1] / "package.json").read_text())
    assert (manifest["name"], manifest["version"], manifest["license"]) == (
        EXAMPLES.name,
        EXAMPLES.version,
        "MIT",
    )
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path / "other"))
    forged = replace(EXAMPLES, integrity="sha512-" + "A" * 86 + "==")  # a tampered tarball's
    with pytest.raises(pytest.fail.Exception, match="not the pinned integrity"):
        package_file(forged, "api.github.com/index.json")
    assert not forged.folder.exists()
