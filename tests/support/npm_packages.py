"""GitHub's own descriptions, from pinned npm packages fetched once into the tools cache.

``@octokit/openapi`` (the REST API's OpenAPI description), ``@octokit/openapi-webhooks``
(every webhook payload's schema) and ``@octokit/webhooks-examples`` (real payloads),
all MIT-licensed by the Octokit contributors. Like the Go tools of ``.ci/tools.txt``
they live in ``${GITMEDIC_TOOLS:-~/.cache/gitmedic-tools}``, one folder per version,
so a machine fetches a version once: ``npm pack`` at the pinned version, the tarball
checked against the pinned integrity, the needed files (and the licence) extracted,
then moved into place; a lock keeps two test processes from fetching at once. A
missing ``npm`` or registry fails the test that needs them (it never skips).
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.tools import tools_dir


@dataclass(frozen=True)
class NpmPackage:
    name: str
    version: str
    integrity: str  # the registry's sha512 of the tarball
    files: tuple[str, ...]  # inside the tarball's package/ folder

    @property
    def folder(self) -> Path:
        slug = self.name.lstrip("@").replace("/", "-")
        return tools_dir() / "npm" / f"{slug}-{self.version}"


OPENAPI = NpmPackage(
    "@octokit/openapi",
    "23.0.2",
    "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==",
    ("generated/api.github.com.json",),
)
WEBHOOKS = NpmPackage(
    "@octokit/openapi-webhooks",
    "12.1.0",
    "sha512-Z5eDsLCUNbx1zHpZb1LNQirADqdMTvWJQ/deahi0ws+tWWnwHXB+Pr4jfmM9OrETS9Y5iW8ZRu1fdbudObhLrg==",
    ("generated/api.github.com.json",),
)
EXAMPLES = NpmPackage(
    "@octokit/webhooks-examples",
    "7.6.1",
    "sha512-De6U3XB6O3DtCa7bKgCMzTHdeopqqZ6SNivMYJnK65ierKL1AnNIA0tkRYCRS7lwGT792d+Ps1WbfHlso6MynQ==",
    ("api.github.com/index.json",),
)


def package_file(package: NpmPackage, name: str) -> Path:
    """A file of ``package`` (one of its ``files``), fetched first when missing."""
    target = package.folder / name
    if not target.is_file():
        _fetch(package)
    return target


def _fetch(package: NpmPackage) -> None:
    package.folder.parent.mkdir(parents=True, exist_ok=True)
    with open(package.folder.parent / f".{package.folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if package.folder.is_dir():
            return  # another process fetched it while this one waited
        with tempfile.TemporaryDirectory(dir=package.folder.parent) as scratch:
            tarball = _pack(package, Path(scratch))
            staged = Path(scratch) / "staged"
            _extract(tarball, staged, (*package.files, "package.json"))
            _extract(tarball, staged, ("LICENSE",), optional=True)  # (package.json names it)
            staged.rename(package.folder)


def _pack(package: NpmPackage, into: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is needed to fetch {package.name}@{package.version}: install it")
    spec = f"{package.name}@{package.version}"
    done = subprocess.run(
        [npm, "pack", spec, "--json", "--pack-destination", str(into)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"npm pack {spec} failed: {done.stderr[-2000:]}")
    tarball = into / str(json.loads(done.stdout)[0]["filename"])
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if f"sha512-{digest}" != package.integrity:
        pytest.fail(f"{spec}: the tarball's sha512 is not the pinned integrity")
    return tarball


def _extract(tarball: Path, into: Path, names: tuple[str, ...], optional: bool = False) -> None:
    into.mkdir(exist_ok=True)
    with tarfile.open(tarball) as archive:
        present = set(archive.getnames())
        for name in names:
            member = (
                archive.extractfile(f"package/{name}") if f"package/{name}" in present else None
            )
            if member is None:
                if optional:
                    continue
                pytest.fail(f"{tarball.name} has no {name}")
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            (into / name).write_bytes(member.read())


def write_atomically(target: Path, text: str) -> None:
    """Write ``target`` whole or not at all (concurrent test processes may race here)."""
    with tempfile.NamedTemporaryFile("w", dir=target.parent, delete=False) as scratch:
        scratch.write(text)
    Path(scratch.name).replace(target)
