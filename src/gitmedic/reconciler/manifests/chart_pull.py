"""Charts from a Helm repository or an OCI registry, pulled by helm into a local cache.

A chart is pulled only from a repository that the manifests themselves declare
(resolved by :mod:`.chart_sources`) or that the work tree's config allows; this
module pulls it and checks what it gets:

- **A Helm repository** (``https://...``): gitmedic fetches its ``index.yaml``
  itself, refusing a redirect to another host, and refuses an index whose
  entries for the chart live on another host (unless an allowed repository
  covers them); the index is handed to helm in its private repository cache, so
  ``helm search repo`` resolves the version constraint as Flux and Argo CD do.
  gitmedic downloads the package itself, from the URL the index gives that
  version, refusing a redirect to another host as for the index (helm's own
  download would follow one anywhere: a declared repository must not send
  gitmedic elsewhere); its sha256 must be the index's ``digest``.
- **An OCI registry** (``oci://...``): ``helm pull oci://...``; the content is
  addressed by digest. Plain HTTP only where the declaration says so (Flux's
  ``spec.insecure``) or to a loopback registry.

helm runs with ``HELM_*`` homes in an empty temporary folder: the user's
repositories, plugins and registry logins never apply. Packages land in a
content-addressed cache (``$GITMEDIC_CHART_CACHE``, else
``$XDG_CACHE_HOME/gitmedic/charts``): ``sha256-<digest>/<chart>-<version>.tgz``,
with a reference per (repository, chart, exact version), so a pinned version
renders offline once pulled. A constraint (``6.x``, ``>=1.0.0``) is resolved
against the repository once per process; when the repository cannot be reached
(no name, no route, refused, timed out: never when it answers with an error or is
refused by the checks above), it is resolved by helm against the versions of that
chart from that repository in the cache, pulled before or added by ``gitmedic
charts add`` (:mod:`.chart_seed`). A pull that fails says which chart, from which
repository, and how to vendor it or add it to the cache.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import yaml

from gitmedic.reconciler.manifests.helm_binary import HelmError, helm_env, helm_path

__all__ = [
    "ChartPullError",
    "ChartUnreachable",
    "RemoteChart",
    "cache_dir",
    "check_repository",
    "pull_chart",
    "store_package",
]

PULL_TIMEOUT_S = 120
MAX_INDEX_BYTES = 64 << 20
MAX_PACKAGE_BYTES = 64 << 20
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$")
# helm pull's words (Go's net package) for a registry it could not reach at all
_UNREACHABLE = re.compile(
    r"no such host|connection refused|i/o timeout|network is unreachable|"
    r"no route to host|TLS handshake timeout|server misbehaving",
    re.IGNORECASE,
)
_pulled: dict[tuple[str, str, str], Path] = {}  # constraints resolved by this process
# A repository that failed is not asked again for a while: a bisect reads many revisions,
# and an unreachable registry takes seconds to say so each time.
FAILURE_KEPT_S = 300.0
_failed: dict[tuple[str, str, str], tuple[float, ChartPullError]] = {}


class ChartPullError(HelmError):
    """The chart cannot be pulled (or may not be); the message names it and says why."""


class ChartUnreachable(ChartPullError):
    """The repository did not answer at all (offline): the cache may hold the chart."""


@dataclass(frozen=True)
class RemoteChart:
    repository: str  # https://charts.example.com or oci://registry/path (without the chart)
    chart: str
    version: str = ""  # an exact version or a constraint; "": the newest stable
    declared_in: str = ""  # the file (and object) declaring the repository, for messages
    insecure: bool = False  # plain HTTP to an OCI registry, as the declaration says
    allowed: tuple[str, ...] = ()  # more repository URLs the package may come from

    @property
    def oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def reference(self) -> str:
        return f"{self.repository.rstrip('/')}/{self.chart}" if self.oci else self.chart

    def describe(self) -> str:
        version = self.version or "(newest)"
        where = f", declared in {self.declared_in}" if self.declared_in else ""
        return f"chart {self.chart} {version} from {self.repository}{where}"

    def vendor_hint(self) -> str:
        source = self.reference if self.oci else f"{self.chart} --repo {self.repository}"
        version = f" --version '{self.version}'" if self.version else ""
        return (
            f"to render without the network, vendor it into the repository (helm pull "
            f"{source}{version} --untar --untardir charts) and render that folder: a Flux "
            "HelmRelease's chart from a GitRepository, an Argo CD source's path; or add "
            f"its package (helm pull {source}{version}) to gitmedic's chart cache: gitmedic "
            f"charts add --repository {self.repository} {self.chart}-VERSION.tgz"
        )


def check_repository(url: str) -> None:
    """Only http(s) and oci URLs naming a host, without credentials in them."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http", "oci"):
        raise ChartPullError(
            f"{url!r} is not a chart repository gitmedic pulls from (https://, http:// or "
            "oci:// only)"
        )
    if not parts.hostname or parts.username or parts.password:
        raise ChartPullError(f"{url!r}: a chart repository URL names a host and no credentials")
    if _unroutable(parts.hostname):
        raise ChartPullError(
            f"{url!r} is not a chart repository gitmedic pulls from (a "
            "link-local, multicast or unspecified address)"
        )


def cache_dir() -> Path:
    given = os.environ.get("GITMEDIC_CHART_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gitmedic" / "charts"


def pull_chart(remote: RemoteChart) -> Path:
    """The chart's package in the cache, pulled when it is not there yet."""
    check_repository(remote.repository)
    key = (_repository_key(remote.repository), remote.chart, remote.version)
    cached = _pulled.get(key) or (_cached(key) if EXACT_VERSION.match(remote.version) else None)
    if cached is not None and cached.is_file():
        return cached
    failed = _failed.get(key)
    if failed is not None and time.monotonic() - failed[0] < FAILURE_KEPT_S:
        raise failed[1]
    try:
        stored = _pull_and_store(remote, key)
    except ChartUnreachable as exc:
        offline = _offline(remote, key)
        if offline is None:
            _failed[key] = (time.monotonic(), exc)
            raise
        stored = offline
    except ChartPullError as exc:
        _failed[key] = (time.monotonic(), exc)
        raise
    _pulled[key] = stored
    return stored


def _repository_key(url: str) -> str:
    """One spelling of a repository in the cache: with or without its trailing slash."""
    return url.rstrip("/")


def _offline(remote: RemoteChart, key: tuple[str, str, str]) -> Path | None:
    """The cached version of the chart ``remote.version`` picks, as helm picks it from
    the repository's index (None: no cached version matches). Only the versions this
    repository's own chart was stored under count: a cache entry is (repository, chart)."""
    versions = _cached_versions(key[0], key[1])
    if not versions:
        return None
    entries = [
        {
            "apiVersion": "v2",
            "name": remote.chart,
            "version": v,
            "urls": [f"{remote.chart}-{v}.tgz"],
        }
        for v in versions
    ]
    index = {"apiVersion": "v1", "entries": {remote.chart: entries}}
    with tempfile.TemporaryDirectory(prefix="gitmedic-offline-") as tmp:
        home = Path(tmp)
        _hand_to_helm(remote, index, home)
        try:
            version = _resolved(remote, home)
        except ChartPullError:
            return None
    return versions.get(version)


def _pull_and_store(remote: RemoteChart, key: tuple[str, str, str]) -> Path:
    with tempfile.TemporaryDirectory(prefix="gitmedic-pull-") as tmp:
        home = Path(tmp)
        package, index = _pull(remote, home)
        digest = hashlib.sha256(package.read_bytes()).hexdigest()
        if index is not None:
            _check_digest(remote, package.name, digest, index)
        return _store(package, digest, key)


def _pull(remote: RemoteChart, home: Path) -> tuple[Path, dict[str, Any] | None]:
    out = home / "out"
    out.mkdir()
    argv = [helm_path(), "pull", "--destination", str(out)]
    index = None
    if remote.oci:
        argv.append(remote.reference)
        if remote.insecure or _loopback(remote.repository):
            argv.append("--plain-http")
    else:
        index = _fetch_index(remote)
        _check_hosts(remote, index)
        _hand_to_helm(remote, index, home)
        version = _resolved(remote, home)
        return _download(remote, _package_url(remote, index, version), out, version), index
    if remote.version:
        argv += ["--version", remote.version]
    _run(argv, remote, home)
    packages = sorted(out.glob("*.tgz"))
    if len(packages) != 1:
        raise ChartPullError(f"{remote.describe()}: helm pull left {len(packages)} packages")
    return packages[0], index


def _resolved(remote: RemoteChart, home: Path) -> str:
    """The version of the chart ``remote.version`` picks in the index, as helm picks it."""
    # a keyword search (the names found are filtered for this chart's own below)
    argv = [helm_path(), "search", "repo", f"gitmedic/{remote.chart}"]
    argv += ["--output", "json", *(["--version", remote.version] if remote.version else [])]
    found = yaml.safe_load(_run(argv, remote, home) or "[]")
    name = f"gitmedic/{remote.chart}"
    entries = [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []
    versions = [str(e.get("version")) for e in entries if e.get("name") == name]
    if not versions:
        raise ChartPullError(
            f"{remote.describe()} cannot be pulled: the repository has no version matching "
            f"{remote.version or '(newest)'}; {remote.vendor_hint()}"
        )
    return versions[0]


def _package_url(remote: RemoteChart, index: dict[str, Any], version: str) -> str:
    base = remote.repository.rstrip("/") + "/"
    for entry in _entries(remote, index):
        urls = entry.get("urls") or []
        if str(entry.get("version")) == version and urls:
            return urljoin(base, str(urls[0]))
    raise ChartPullError(f"{remote.describe()}: the index names no package of {version}")


def _download(remote: RemoteChart, url: str, out: Path, version: str) -> Path:
    """The package at ``url``, following redirects on the repository's host only."""
    data = _get(remote, url, MAX_PACKAGE_BYTES)
    package = out / f"{remote.chart}-{version}.tgz"
    package.write_bytes(data)
    return package


def _run(argv: list[str], remote: RemoteChart, home: Path) -> str:
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=PULL_TIMEOUT_S,
            check=False,
            env=helm_env(home, network=True),
            cwd=home,
        )
    except subprocess.TimeoutExpired as exc:
        reason = f"{remote.describe()} cannot be pulled: {exc}; {remote.vendor_hint()}"
        raise ChartUnreachable(reason) from None
    except OSError as exc:
        reason = f"{remote.describe()} cannot be pulled: {exc}; {remote.vendor_hint()}"
        raise ChartPullError(reason) from None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"helm pull exited {proc.returncode}"]
        reason = lines[-1].removeprefix("Error: ")
        failure = ChartUnreachable if _UNREACHABLE.search(reason) else ChartPullError
        raise failure(f"{remote.describe()} cannot be pulled: {reason}; {remote.vendor_hint()}")
    return proc.stdout


def _get(remote: RemoteChart, url: str, limit: int) -> bytes:
    """``url``'s body, at most ``limit`` bytes, redirected on the repository's host only."""
    import urllib.error

    try:
        with _same_host_opener(url).open(url, timeout=PULL_TIMEOUT_S) as answer:
            data: bytes = answer.read(limit + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, urllib.error.HTTPError):
            exc.close()  # the error holds the answer's connection open
        # an answer (an HTTP error, a redirect refused) is not "offline"; no answer is
        unreachable = not isinstance(exc, urllib.error.HTTPError) and isinstance(reason, OSError)
        failure = ChartUnreachable if unreachable else ChartPullError
        raise failure(
            f"{remote.describe()} cannot be pulled: {url}: {reason}; {remote.vendor_hint()}"
        ) from None
    if len(data) > limit:
        raise ChartPullError(f"{url} is larger than {limit >> 20} MB")
    return data


def _same_host_opener(url: str) -> Any:
    """An opener whose redirects stay on the repository's host: the index is the
    repository's own. Imported when an index or a package is fetched: ``urllib.request``
    (http.client, ssl, email) is about 20 ms of start-up a detect pulling nothing skips.
    An ``https`` fetch shares the process's one TLS context (:func:`_tls`)."""
    import urllib.error
    import urllib.request

    class SameHost(urllib.request.HTTPRedirectHandler):
        def redirect_request(  # type: ignore[no-untyped-def]
            self, req, fp, code, msg, headers, newurl
        ):
            if urlsplit(newurl).netloc != urlsplit(req.full_url).netloc:
                raise urllib.error.URLError(f"it redirects to another host ({newurl})")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    if urlsplit(url).scheme != "https":
        return urllib.request.build_opener(SameHost)
    return urllib.request.build_opener(SameHost, urllib.request.HTTPSHandler(context=_tls()))


@cache
def _tls() -> Any:
    """The TLS context of every fetch: making one reads the system's CA certificates
    (about 22 ms of CPU), which urllib otherwise does again for each connection (a Flux
    repository's charts are one fetch each). Verification is urllib's default."""
    import ssl

    return ssl.create_default_context()


def _fetch_index(remote: RemoteChart) -> dict[str, Any]:
    url = remote.repository.rstrip("/") + "/index.yaml"
    data = _get(remote, url, MAX_INDEX_BYTES)
    try:
        index = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ChartPullError(f"{url} is not a Helm repository index: {exc}") from None
    if not isinstance(index, dict) or not isinstance(index.get("entries"), dict):
        raise ChartPullError(f"{url} is not a Helm repository index (no entries)")
    if remote.chart not in index["entries"]:
        raise ChartPullError(f"{remote.describe()}: the repository has no chart {remote.chart}")
    return index


def _entries(remote: RemoteChart, index: dict[str, Any]) -> list[dict[str, Any]]:
    found = index["entries"].get(remote.chart)
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def _check_hosts(remote: RemoteChart, index: dict[str, Any]) -> None:
    """Every package URL of the chart is on the repository's host (or an allowed one's)."""
    base = remote.repository.rstrip("/") + "/"
    allowed = tuple(a.rstrip("/") + "/" for a in remote.allowed)
    for entry in _entries(remote, index):
        for url in entry.get("urls") or []:
            full = urljoin(base, str(url))
            parts = urlsplit(full)
            own = parts.netloc == urlsplit(base).netloc or full.startswith(allowed)
            if parts.scheme not in ("http", "https") or not own:
                raise ChartPullError(
                    f"{remote.describe()}: the index serves it from {full}, outside the "
                    "repository's host; gitmedic pulls only from repositories the repo declares "
                    "or manifests.chart_repositories allows"
                )


def _hand_to_helm(remote: RemoteChart, index: dict[str, Any], home: Path) -> None:
    """The fetched index as helm's cached index of a repository named ``gitmedic``."""
    cache = home / "repository"
    cache.mkdir()
    (cache / "gitmedic-index.yaml").write_text(yaml.safe_dump(index))
    repos = {"apiVersion": "", "repositories": [{"name": "gitmedic", "url": remote.repository}]}
    (home / "repositories.yaml").write_text(yaml.safe_dump(repos))


def _check_digest(remote: RemoteChart, package: str, digest: str, index: dict[str, Any]) -> None:
    for entry in _entries(remote, index):
        named = f"{remote.chart}-{entry.get('version')}.tgz" == package
        if named and entry.get("digest") and str(entry["digest"]) != digest:
            raise ChartPullError(
                f"{remote.describe()}: {package} has sha256 {digest}, the index says "
                f"{entry['digest']}"
            )


def _store(package: Path, digest: str, key: tuple[str, str, str]) -> Path:
    version = package.name.removeprefix(f"{key[1]}-").removesuffix(".tgz")
    return store_package(package, digest, (key[0], key[1], version))


def store_package(package: Path, digest: str, key: tuple[str, str, str]) -> Path:
    """``package`` (sha256 ``digest``) in the cache as the chart ``key`` = (repository,
    chart, exact version), found again by that key and by its (repository, chart)."""
    repository, chart, version = key
    folder = cache_dir() / f"sha256-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    stored = folder / f"{chart}-{version}.tgz"
    if not stored.is_file():
        part = folder / f".{stored.name}.{_writer()}"
        shutil.copyfile(package, part)
        part.replace(stored)
    key = (_repository_key(repository), chart, version)
    _write_ref(key, stored)
    if EXACT_VERSION.match(version):  # a file name of digits, letters and .+- only
        _write_ref(key, stored, _versions_folder(key[0], chart) / version)
    return stored


def _writer() -> str:
    """A name for a partly written file no other writer shares: other processes, and the
    other threads of this one (a walk renders its charts side by side)."""
    return f"{os.getpid()}-{threading.get_ident()}"


def _ref_file(key: tuple[str, str, str]) -> Path:
    name = hashlib.sha256("\n".join(key).encode()).hexdigest()
    return cache_dir() / "refs" / name


def _versions_folder(repository: str, chart: str) -> Path:
    """One file per version of ``chart`` from ``repository`` in the cache."""
    name = hashlib.sha256(f"{repository}\n{chart}".encode()).hexdigest()
    return cache_dir() / "versions" / name


def _cached_versions(repository: str, chart: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    folder = _versions_folder(repository, chart)
    for ref in sorted(folder.iterdir()) if folder.is_dir() else ():
        if ref.name.startswith(".") or not EXACT_VERSION.match(ref.name):
            continue  # a partly written reference, or not one of ours
        stored = _stored(ref)
        if stored is not None:
            found[ref.name] = stored
    return found


def _write_ref(key: tuple[str, str, str], stored: Path, ref: Path | None = None) -> None:
    ref = ref or _ref_file(key)
    ref.parent.mkdir(parents=True, exist_ok=True)
    part = ref.parent / f".{ref.name}.{_writer()}"  # a version's name has dots of its own
    part.write_text(str(stored.relative_to(cache_dir())))
    part.replace(ref)


def _cached(key: tuple[str, str, str]) -> Path | None:
    """An exact version pulled before (also written ``v1.2.3`` or ``1.2.3``)."""
    for version in dict.fromkeys([key[2], key[2].removeprefix("v")]):
        stored = _stored(_ref_file((key[0], key[1], version)))
        if stored is not None:
            return stored
    return None


def _stored(ref: Path) -> Path | None:
    """The package a reference names, when it is a package of the cache."""
    if not ref.is_file():
        return None
    stored = cache_dir() / ref.read_text().strip()
    if stored.is_file() and stored.parent.parent == cache_dir():
        return stored
    return None


def _unroutable(host: str) -> bool:
    """Addresses no chart repository has: cloud metadata endpoints (169.254.169.254)."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return ip.is_link_local or ip.is_multicast or ip.is_unspecified


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
