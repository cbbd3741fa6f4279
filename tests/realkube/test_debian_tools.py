"""Debian's etcd and redis-server for the tier: ``tools/kube/build.sh`` unpacks them
into the tools cache (``apt-get download`` + ``dpkg -x``) and never installs them, so
the system's PATH is the same after a build as before it (CI's ``make test`` runs
beside the build, and an install into /usr/bin once hid a test that failed on a
fresh machine); :func:`find_tools` looks in the cache first, then on PATH.

A stand-in ``apt-get`` serves .deb files made here with ``dpkg-deb``, so the real
``dpkg -x`` and the script's layout are under test, without the network."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.realkube.tools import (
    DEBIAN_KEY_FILES,
    K8S_BINARIES,
    K8S_KEY_FILES,
    WRAPPERS,
    Tools,
    cache_key,
    find_tools,
)
from tests.support.postgres import POSTGRES_KEY_FILES

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg-deb")
# the build fetches nothing on a machine with its own (as it should): those two tests
# need one without them, as CI's and a fresh machine are
FETCHES = pytest.mark.skipif(
    bool(shutil.which("etcd") or shutil.which("redis-server")),
    reason="this machine has its own etcd or redis-server on PATH",
)

LIBDIR = "usr/lib/x86_64-linux-gnu"
# redis-server, as Debian ships it: a link to redis-check-rdb, which needs a library
# that a minimal Debian lacks (the stand-in refuses to run without it beside it)
REDIS = '#!/bin/sh\n[ -f "$LD_LIBRARY_PATH/libjemalloc.so.2" ] || exit 127\necho "Redis v=7"\n'


def executable(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)


def deb(folder: Path, name: str, files: dict[str, str], links: dict[str, str]) -> None:
    tree = folder / "trees" / name
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@t.invalid>\n"
        "Description: a stand-in\n"
    )
    for path, body in files.items():
        executable(tree / path, body)
    for path, target in links.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).symlink_to(target)
    subprocess.run(
        ["dpkg-deb", "--build", "--root-owner-group", str(tree), str(folder / f"{name}.deb")],
        check=True,
        capture_output=True,
    )


def debian_mirror(tmp_path: Path) -> Path:
    """A PATH folder with an ``apt-get`` that, like a fresh machine's, finds the
    packages only after ``apt-get update``; it logs its calls to ``apt-calls``."""
    debs = tmp_path / "debs"
    deb(debs, "etcd-server", {"usr/bin/etcd": "#!/bin/sh\necho 'etcd Version: 3.4.23'\n"}, {})
    deb(debs, "redis-tools", {"usr/bin/redis-check-rdb": REDIS}, {})
    deb(debs, "redis-server", {}, {"usr/bin/redis-server": "redis-check-rdb"})
    deb(debs, "libjemalloc2", {f"{LIBDIR}/libjemalloc.so.2": ""}, {})
    bin_dir = tmp_path / "bin"
    executable(
        bin_dir / "apt-get",
        f"""#!/bin/sh
echo "$*" >> {tmp_path}/apt-calls
case "$1" in
update) touch {tmp_path}/updated ;;
download) [ -f {tmp_path}/updated ] || {{ echo "E: Unable to locate package" >&2; exit 100; }}
          cp {debs}/*.deb . ;;
*) echo "apt-get: unexpected $*" >&2; exit 1 ;;
esac
""",
    )
    return bin_dir


def k8s_built(tools: Path) -> Path:
    """A complete Kubernetes group (stand-in binaries), as a warm machine has, and
    PostgreSQL already fetched (its fetch is the journal's, tested on its own): what
    these tests see fetched is Debian's etcd and redis-server alone."""
    k8s = tools / f"kube-k8s-{cache_key(K8S_KEY_FILES)}"
    for name in K8S_BINARIES:
        executable(k8s / "bin" / name, "#!/bin/sh\n")
    (k8s / ".complete").touch()
    postgres = tools / f"kube-postgres-{cache_key(POSTGRES_KEY_FILES)}"
    postgres.mkdir(parents=True)
    (postgres / ".complete").touch()
    return k8s


@FETCHES
def test_the_build_unpacks_etcd_and_redis_into_the_cache_and_installs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    k8s_built(tools)
    path = f"{debian_mirror(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "GITMEDIC_TOOLS": str(tools)}

    done = subprocess.run(
        ["bash", str(WRAPPERS / "build.sh"), "k8s"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    debian = tools / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"
    assert f"fetching Debian's etcd and redis-server into {debian}" in done.stdout
    calls = (tmp_path / "apt-calls").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["download", "update", "download"]
    assert "install" not in " ".join(calls)
    assert sorted(p.name for p in (debian / "bin").iterdir()) == ["etcd", "redis-server"]
    assert not (debian / "bin" / "redis-server").is_symlink(), "the link's target, copied"
    assert (debian / "lib" / "libjemalloc.so.2").is_file() and (debian / ".complete").is_file()
    assert not list(tools.glob("*.partial"))
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tools))
    found = find_tools()
    assert isinstance(found, Tools), found
    assert (found.etcd, found.redis) == (debian / "bin" / "etcd", debian / "bin" / "redis-server")
    assert found.redis_env == {"LD_LIBRARY_PATH": str(debian / "lib")}


@FETCHES
def test_a_second_build_finds_them_in_the_cache(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    k8s_built(tools)
    path = f"{debian_mirror(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "GITMEDIC_TOOLS": str(tools)}
    build = ["bash", str(WRAPPERS / "build.sh"), "k8s"]
    subprocess.run(build, capture_output=True, text=True, env=env, timeout=120, check=True)
    (tmp_path / "apt-calls").unlink()

    again = subprocess.run(build, capture_output=True, text=True, env=env, timeout=120)

    assert again.returncode == 0, again.stderr
    assert "kube tools: debian present in" in again.stdout
    assert not (tmp_path / "apt-calls").exists(), "nothing fetched twice"


def test_the_cache_comes_before_the_machines_own_and_path_is_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    k8s_built(tools)
    own = tmp_path / "own"
    for name in ("etcd", "redis-server"):
        executable(own / name, "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(own))
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tools))

    on_path = find_tools()
    debian = tools / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"
    for name in ("etcd", "redis-server"):
        executable(debian / "bin" / name, "#!/bin/sh\n")
    (debian / ".complete").touch()
    cached = find_tools()

    assert isinstance(on_path, Tools) and isinstance(cached, Tools)
    assert (on_path.etcd, on_path.redis, on_path.redis_env) == (
        own / "etcd",
        own / "redis-server",
        {},
    )
    assert (cached.etcd, cached.redis) == (debian / "bin" / "etcd", debian / "bin" / "redis-server")


def test_without_redis_the_argo_cd_tests_get_the_reason_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    k8s_built(tools)
    own = tmp_path / "own"
    executable(own / "etcd", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(own))
    monkeypatch.setenv("GITMEDIC_TOOLS", str(tools))

    found = find_tools()

    assert isinstance(found, Tools)
    debian = tools / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"
    assert found.argocd_missing.startswith(f"no redis-server in {debian} nor on PATH: run ")
