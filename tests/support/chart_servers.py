"""Real chart servers on 127.0.0.1 for the tests: a Helm repository and an OCI registry.

A Helm repository is exactly an HTTP server serving an ``index.yaml`` made by
``helm repo index`` and the chart packages it lists: :func:`helm_repository`
serves one with Python's HTTP server. The OCI registry is go-containerregistry's
``registry`` (pinned in ``.ci/tools.txt``), which ``helm push --plain-http``
pushes to as to any registry. helm runs with homes of its own in the test's
folder, so nothing of the machine's helm config is read or written.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.tools import tool_path


def helm_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
        "HELM_REGISTRY_CONFIG": str(home / "registry.json"),
        "HELM_REPOSITORY_CONFIG": str(home / "repositories.yaml"),
    }


def helm(home: Path, *argv: str | Path) -> str:
    proc = subprocess.run(
        [tool_path("helm"), *map(str, argv)],
        capture_output=True,
        text=True,
        env=helm_env(home),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def package(chart: Path, into: Path) -> Path:
    """``helm package``: the chart's .tgz in ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    out = helm(into, "package", chart, "--destination", into)
    return Path(out.strip().rsplit(": ", 1)[1])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def helm_repository(folder: Path, url_of_packages: str | None = None) -> Iterator[str]:
    """Serves ``folder`` (its packages indexed by ``helm repo index``) at an http URL.
    ``url_of_packages``: the base URL the index names the packages at (default: its own)."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    helm(folder, "repo", "index", folder, "--url", url_of_packages or url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def oci_registry(log: Path) -> Iterator[str]:
    """go-containerregistry's registry on 127.0.0.1 at a free port: ``127.0.0.1:PORT``."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            [tool_path("registry"), "-port", "0"], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        port = _served_port(proc, log)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _served_port(proc: subprocess.Popen[bytes], log: Path) -> int:
    """The port the registry says it serves on (it logs it once it listens)."""
    for _ in range(600):
        found = re.search(r"serving on port (\d+)", log.read_text())
        if found:
            return int(found[1])
        if proc.poll() is not None:
            raise AssertionError(f"registry exited {proc.returncode}: {log.read_text()}")
        threading.Event().wait(0.05)
    raise AssertionError(f"registry did not start: {log.read_text()}")


def push(home: Path, package_file: Path, registry: str, path: str = "charts") -> str:
    """``helm push --plain-http`` to the registry: the chart's OCI repository URL."""
    helm(home, "push", package_file, f"oci://{registry}/{path}", "--plain-http")
    return f"oci://{registry}/{path}"


@contextmanager
def redirecting_repository(folder: Path, to: str) -> Iterator[tuple[str, list[str]]]:
    """A Helm repository on 127.0.0.1 whose index lists ``folder``'s packages on its own
    host, each answered by a redirect (302) to the same path under ``to``; and the paths
    it was asked for."""
    asked: list[str] = []

    class Redirecting(_Quiet):
        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path.endswith(".tgz"):
                self.send_response(302)
                self.send_header("Location", to.rstrip("/") + self.path)
                self.end_headers()
                return
            super().do_GET()

    handler = functools.partial(Redirecting, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    helm(folder, "repo", "index", folder, "--url", url)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url, asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
