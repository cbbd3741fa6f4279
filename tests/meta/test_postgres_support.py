"""Where the journal's PostgreSQL tests find a server, or the reason they skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.postgres import Binaries, find_postgres, postgres_dir


def test_without_the_cache_or_a_server_on_path_the_reason_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    found = find_postgres()
    assert found == (
        f"no PostgreSQL server in {postgres_dir()} nor on PATH: run tools/kube/build.sh k8s "
        "(it fetches Debian's postgresql-15 into its cache)"
    )


def test_the_build_scripts_cache_comes_first_with_its_libraries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    cached = postgres_dir()
    binary = cached / "usr/lib/postgresql/15/bin/postgres"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert isinstance(find_postgres(), str), "an unfinished fetch (no .complete) is not used"
    (cached / ".complete").write_text("")
    assert find_postgres() == Binaries(
        binary.parent, {"LD_LIBRARY_PATH": str(cached / "lib")}, cached
    )
