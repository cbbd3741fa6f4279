"""The chart cache's parts that need neither helm nor a network: reading a package added
by hand (``gitmedic charts add``), storing it under its repository, and telling a
repository that did not answer (offline: the cache may serve) from one that refused."""

from __future__ import annotations

import hashlib
import http.server
import io
import socket
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmedic.reconciler.manifests import chart_pull
from gitmedic.reconciler.manifests.chart_pull import (
    ChartPullError,
    ChartUnreachable,
    RemoteChart,
    cache_dir,
)
from gitmedic.reconciler.manifests.chart_seed import add_package, chart_identity

REPO = "https://charts.example.com"
CHART_YAML = b"apiVersion: v2\nname: web\nversion: 1.2.3\n"


def tgz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_package_names_its_chart_and_exact_version() -> None:
    data = tgz({"web/Chart.yaml": CHART_YAML, "web/templates/cm.yaml": b"kind: ConfigMap\n"})
    assert chart_identity(data, "web.tgz") == ("web", "1.2.3")


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"web/values.yaml": b"{}\n"}, "is not a chart package (one folder holding Chart.yaml"),
        (
            {"web/Chart.yaml": CHART_YAML, "api/Chart.yaml": CHART_YAML},
            "is not a chart package (one folder holding Chart.yaml",
        ),
        ({"web/Chart.yaml": b"name: web\nversion: '>=1.0'\n"}, "is not an exact version"),
        ({"web/Chart.yaml": b"name: ../web\nversion: 1.0.0\n"}, "names no chart"),
        ({"web/Chart.yaml": b"- a list\n"}, "its Chart.yaml is not a mapping"),
        ({"web/Chart.yaml": b"name: [\n"}, "its Chart.yaml is not YAML"),
    ],
)
def test_what_is_not_a_chart_package_is_refused_naming_the_file(
    files: dict[str, bytes], says: str
) -> None:
    with pytest.raises(ChartPullError, match=r"^pkg\.tgz") as caught:
        chart_identity(tgz(files), "pkg.tgz")
    assert says in str(caught.value)


def test_a_file_that_is_no_gzip_tar_is_refused() -> None:
    with pytest.raises(ChartPullError, match=r"pkg\.tgz is not a chart package \(a gzip tar\)"):
        chart_identity(b"not a package\n", "pkg.tgz")


def test_an_added_package_is_stored_by_digest_under_its_repository(
    tmp_path: Path, cache: Path
) -> None:
    data = tgz({"web/Chart.yaml": CHART_YAML})
    (tmp_path / "download.tgz").write_bytes(data)
    added = add_package(tmp_path / "download.tgz", REPO + "/")
    digest = hashlib.sha256(data).hexdigest()
    assert (added.repository, added.chart, added.version, added.digest) == (
        REPO,
        "web",
        "1.2.3",
        digest,
    )
    assert added.stored == cache / f"sha256-{digest}" / "web-1.2.3.tgz"
    assert added.stored.read_bytes() == data
    # found again by the exact version, and among the versions of (repository, chart) only
    assert chart_pull._cached((REPO, "web", "1.2.3")) == added.stored
    assert chart_pull._cached_versions(REPO, "web") == {"1.2.3": added.stored}
    assert chart_pull._cached_versions("https://other.example.com", "web") == {}
    assert chart_pull._cached_versions(REPO, "api") == {}


def test_a_version_reference_pointing_outside_the_cache_is_ignored(cache: Path) -> None:
    folder = chart_pull._versions_folder(REPO, "web")
    folder.mkdir(parents=True)
    (folder / "1.0.0").write_text("../../etc/passwd")
    (folder / ".1.0.0.123-456").write_text("sha256-x/web-1.0.0.tgz")  # a partly written one
    assert chart_pull._cached_versions(REPO, "web") == {}


def test_an_unsafe_repository_is_refused_before_reading_the_package(tmp_path: Path) -> None:
    with pytest.raises(ChartPullError, match="is not a chart repository gitmedic pulls from"):
        add_package(tmp_path / "absent.tgz", "file:///srv/charts")
    with pytest.raises(ChartPullError, match=r"absent\.tgz: cannot be read"):
        add_package(tmp_path / "absent.tgz", REPO)
    assert not cache_dir().exists()


class _NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_repository_that_answers_with_an_error_is_not_offline(answering: str) -> None:
    remote = RemoteChart(answering, "web", "1.x")
    with pytest.raises(ChartPullError) as caught:
        chart_pull._get(remote, f"{answering}/index.yaml", 1 << 20)
    assert not isinstance(caught.value, ChartUnreachable)
    assert "Not Found" in str(caught.value)


def test_a_repository_that_does_not_answer_is_offline() -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    remote = RemoteChart(url, "web", "1.x")
    with pytest.raises(ChartUnreachable, match="Connection refused"):
        chart_pull._get(remote, f"{url}/index.yaml", 1 << 20)


@pytest.mark.parametrize(
    ("helm_says", "offline"),
    [
        ('Get "https://quay.io/v2/x/tags/list": dial tcp: lookup quay.io: no such host', True),
        ("dial tcp 127.0.0.1:5000: connect: connection refused", True),
        ("net/http: TLS handshake timeout", True),
        ("oci://ghcr.io/x/y:69.x: not found", False),
        ("unexpected status from HEAD request: 401 Unauthorized", False),
    ],
)
def test_helm_s_words_for_a_registry_it_could_not_reach(helm_says: str, offline: bool) -> None:
    assert bool(chart_pull._UNREACHABLE.search(helm_says)) is offline


def test_the_hint_names_the_repository_for_gitmedic_charts_add() -> None:
    hint = RemoteChart("oci://ghcr.io/org/charts", "stack", "69.x").vendor_hint()
    assert "helm pull oci://ghcr.io/org/charts/stack --version '69.x' --untar" in hint
    assert "gitmedic charts add --repository oci://ghcr.io/org/charts stack-VERSION.tgz" in hint


def test_charts_add_says_when_the_cache_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from gitmedic.bot.cli.charts import run_charts_add
    from gitmedic.bot.common.exits import UsageError

    (tmp_path / "web.tgz").write_bytes(tgz({"web/Chart.yaml": CHART_YAML}))
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("GITMEDIC_CHART_CACHE", str(tmp_path / "a-file" / "cache"))
    args = argparse.Namespace(repository=REPO, packages=[str(tmp_path / "web.tgz")])
    with pytest.raises(UsageError, match=r"^cannot write the chart cache \(.*a-file/cache"):
        run_charts_add(args)
