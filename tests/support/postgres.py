"""A real PostgreSQL server for the journal's PostgreSQL tests, or the reason there is none.

Debian's server, as tools/kube/build.sh unpacks it into
``$GITMEDIC_TOOLS/kube-postgres-<key>`` (the key of tools/kube/postgres.txt), is
looked for first, then ``initdb``/``pg_ctl``/``postgres`` on PATH. Nothing is
installed: :func:`running_postgres` runs ``initdb`` into a temporary folder, starts
the server on 127.0.0.1 on a free port (no Unix socket) with password
authentication, and stops it at the end. The server refuses to run as root, so
under root it runs as ``nobody``, from a hard-linked copy of the binaries in the
temporary folder (root's home is not readable by ``nobody``).

The ``postgres_server`` fixture (session) is that server, or a skip naming what is
missing and the command that provides it; ``postgres_url`` is a fresh database on it
per test.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.realkube.tools import cache_key, tools_root

POSTGRES_KEY_FILES = ("postgres.txt",)
PROGRAMS = ("initdb", "pg_ctl", "postgres")
HINT = "run tools/kube/build.sh k8s (it fetches Debian's postgresql-15 into its cache)"


@dataclass(frozen=True)
class Binaries:
    bin: Path  # initdb, pg_ctl, postgres
    env: dict[str, str]  # LD_LIBRARY_PATH for the unpacked libraries, or {}
    root: Path | None  # the unpacked tree (copied whole when the server runs as nobody)


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    password: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def postgres_dir() -> Path:
    return tools_root() / f"kube-postgres-{cache_key(POSTGRES_KEY_FILES)}"


def find_postgres() -> Binaries | str:
    """The server's binaries, or why there are none and how to get them."""
    cached = postgres_dir()
    if (cached / ".complete").is_file():
        found = sorted(cached.glob("usr/lib/postgresql/*/bin/postgres"))
        if found:
            return Binaries(found[-1].parent, {"LD_LIBRARY_PATH": str(cached / "lib")}, cached)
    on_path = [shutil.which(name) for name in PROGRAMS]
    if all(on_path):
        return Binaries(Path(os.path.realpath(on_path[2] or "")).parent, {}, None)
    return f"no PostgreSQL server in {cached} nor on PATH: {HINT}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user(folder: Path) -> dict[str, object]:
    """Popen's arguments that run the server as nobody when we are root, owning ``folder``."""
    if os.geteuid() != 0:
        return {}
    for path in itertools.chain([folder], folder.rglob("*")):
        os.chown(path, 65534, 65534, follow_symlinks=False)
    return {"user": 65534, "group": 65534, "extra_groups": []}


def _runnable_copy(found: Binaries, base: Path) -> Binaries:
    """Under root, the binaries where nobody can run them: hard links in ``base``."""
    if os.geteuid() != 0 or found.root is None:
        return found
    copy = base / "pg"
    shutil.copytree(found.root, copy, symlinks=True, copy_function=_link_or_copy)
    os.chmod(base, 0o755)
    return Binaries(
        copy / found.bin.relative_to(found.root), {"LD_LIBRARY_PATH": str(copy / "lib")}, copy
    )


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@contextmanager
def running_postgres(found: Binaries) -> Iterator[PostgresServer]:
    base = Path(tempfile.mkdtemp(prefix="gitmedic-pg-"))
    try:
        binaries = _runnable_copy(found, base)
        data, log = base / "data", base / "server.log"
        password = secrets.token_hex(12)
        (base / "pw").write_text(password)
        data.mkdir()
        user = _as_server_user(base)
        env = {**os.environ, **binaries.env, "LC_ALL": "C"}

        def run(*argv: str) -> None:
            result = subprocess.run(
                argv, env=env, capture_output=True, text=True, timeout=120, check=False, **user
            )
            if result.returncode != 0:
                tail = log.read_text()[-2000:] if log.exists() else ""
                raise RuntimeError(f"{' '.join(argv[:2])} failed: {result.stderr}{tail}")

        initdb = [str(binaries.bin / "initdb"), "-D", str(data), "-U", "gitmedic", "-E", "UTF8"]
        run(*initdb, f"--pwfile={base / 'pw'}", "--auth=scram-sha-256")
        port = _free_port()
        # no Unix socket (its default folder is the system's); fsync off: a test server
        options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
        pg_ctl = [str(binaries.bin / "pg_ctl"), "-D", str(data), "-w", "-t", "60"]
        run(*pg_ctl, "-l", str(log), "-o", f"{options} -c fsync=off", "start")
        try:
            yield PostgresServer("127.0.0.1", port, "gitmedic", password)
        finally:
            run(*pg_ctl, "-m", "immediate", "stop")
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    found = find_postgres()
    if isinstance(found, str):
        pytest.skip(found)
    try:
        import psycopg  # noqa: F401
    except ModuleNotFoundError:
        pytest.skip("psycopg is not installed: pip install 'gitmedic[postgres]'")
    with running_postgres(found) as server:
        yield server


_databases = itertools.count(1)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database per test (the server is shared by the session)."""
    return postgres_server.create_database(f"t{os.getpid()}_{next(_databases)}")
