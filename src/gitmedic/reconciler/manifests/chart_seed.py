"""Chart packages added to the chart cache by hand, for machines without the network.

An air-gapped CI runner cannot pull the charts a repository's HelmReleases and
Applications name. A person pulls them where the network is (``helm pull``) and
adds each package with the repository it comes from (``gitmedic charts add
--repository URL PACKAGE``): the cache then holds it as if gitmedic had pulled it
from that repository, so an exact version renders offline and a constraint is
resolved against the cached versions (:mod:`.chart_pull`). A package is only ever
used for a chart the manifests take from that repository: adding one allows no
repository.

The package is read, not trusted: a gzip tar of one chart folder whose
``Chart.yaml`` names the chart and an exact version, within the size a pull accepts.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from gitmedic.reconciler.manifests.chart_pull import (
    EXACT_VERSION,
    MAX_PACKAGE_BYTES,
    ChartPullError,
    check_repository,
    store_package,
)

__all__ = ["Added", "add_package"]

MAX_CHART_YAML_BYTES = 1 << 20
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Added:
    repository: str
    chart: str
    version: str
    digest: str  # sha256 of the package, hex
    stored: Path


def add_package(package: Path, repository: str) -> Added:
    """``package`` in the cache as its chart's version from ``repository``."""
    check_repository(repository)
    data = read_package(package)
    chart, version = chart_identity(data, str(package))
    digest = hashlib.sha256(data).hexdigest()
    stored = store_package(package, digest, (repository, chart, version))
    return Added(repository.rstrip("/"), chart, version, digest, stored)


def read_package(package: Path) -> bytes:
    """The bytes of a package file, at most the cap a pulled package has."""
    try:
        with package.open("rb") as f:
            data = f.read(MAX_PACKAGE_BYTES + 1)
    except OSError as exc:
        raise ChartPullError(f"{package}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_PACKAGE_BYTES:
        raise ChartPullError(f"{package} is larger than {MAX_PACKAGE_BYTES >> 20} MB")
    return data


def chart_identity(data: bytes, name: str) -> tuple[str, str]:
    """(chart, version) of the package ``data`` (``name`` for messages), from the
    ``Chart.yaml`` at the top of its one folder, as ``helm package`` writes it."""
    chart_yaml = _chart_yaml(data, name)
    try:
        meta = yaml.safe_load(chart_yaml)
    except yaml.YAMLError as exc:
        raise ChartPullError(f"{name}: its Chart.yaml is not YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise ChartPullError(f"{name}: its Chart.yaml is not a mapping")
    chart, version = str(meta.get("name") or ""), str(meta.get("version") or "")
    if not _NAME.match(chart):
        raise ChartPullError(f"{name}: its Chart.yaml names no chart (name: {chart!r})")
    if not EXACT_VERSION.match(version):
        raise ChartPullError(
            f"{name}: chart {chart}'s version {version!r} is not an exact version (x.y.z)"
        )
    return chart, version


def _chart_yaml(data: bytes, name: str) -> bytes:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            folders = set()
            found = None
            for member in tar:
                parts = member.name.split("/")
                folders.add(parts[0])
                if len(parts) == 2 and parts[1] == "Chart.yaml" and member.isfile():
                    found = member
            if len(folders) != 1 or found is None:
                raise ChartPullError(
                    f"{name} is not a chart package (one folder holding Chart.yaml, as helm "
                    "package and helm pull write it)"
                )
            if found.size > MAX_CHART_YAML_BYTES:
                raise ChartPullError(f"{name}: its Chart.yaml is larger than 1 MB")
            reader = tar.extractfile(found)
            if reader is None:
                raise ChartPullError(f"{name}: its Chart.yaml cannot be read")
            return reader.read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ChartPullError(f"{name} is not a chart package (a gzip tar): {exc}") from None
