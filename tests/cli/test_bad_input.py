"""Bad input to ``gitmedic detect``: a clear error naming file and line, exit 2, nothing
half-printed (stdout is the complete report, or empty for usage errors), bounded memory,
and the input left as it was. How fast each is refused is measured by bench/bad_input.py."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.bad_inputs import (
    BOMB,
    HUGE_BYTES,
    write_bomb,
    write_huge,
    write_late_tab,
    write_small,
)
from tests.cli.conftest import Cli
from tests.conftest import APPS
from tests.manifests.helpers import CM, commit_all, init_repo, write

BAD_FILES: dict[str, tuple[bytes, int, str]] = {
    # name: (content, line, message fragment)
    "malformed": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: [\n",
        6,
        "invalid",
    ),
    "tabs": (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n", 4, "tab character"),
    "duplicate-keys": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
        5,
        "duplicate key 'name'",
    ),
    "list-document": (b"- apiVersion: v1\n- kind: ConfigMap\n", 1, "is a list, not an object"),
    "scalar-document": (CM.format(name="a").encode() + b"---\n42\n", 6, "is a number"),
    "no-apiversion": (b"kind: ConfigMap\nmetadata:\n  name: a\n", 1, "has no apiVersion"),
    "no-kind": (b"apiVersion: v1\nmetadata:\n  name: a\n", 1, "has no kind"),
    "alias-bomb": (BOMB.encode(), 10, "alias bomb"),  # where expansion passes the bound
    "non-utf8": (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xff\xfe\n", 4, "not UTF-8"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_bad_file_is_an_error_naming_file_and_line(
    cli: Cli, tmp_path: Path, name: str, fmt: str
) -> None:
    content, line, fragment = BAD_FILES[name]
    (tmp_path / "ok.yaml").write_text(CM.format(name="fine"))
    (tmp_path / f"{name}.yaml").write_bytes(content)
    result = cli("detect", tmp_path, "--format", fmt)
    assert result.rc == 2
    if fmt == "json":
        report = result.json()  # complete, valid JSON
        assert report["findings"] == []
        (error,) = report["errors"]
        assert (error["file"], error["line"]) == (f"{name}.yaml", line)
        assert fragment in error["message"]
    elif fmt == "sarif":
        (note,) = result.json()["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        loc = note["locations"][0]["physicalLocation"]
        assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == (
            f"{name}.yaml",
            line,
        )
    else:
        assert result.err.startswith(f"error: {name}.yaml:{line}: ")
        assert fragment in result.err
        # the good file was still analysed
        assert result.out.startswith("0 findings in ") and result.out.endswith("; 1 error\n")
        assert " 0 objects" not in result.out


def test_teastore_trailing_tabs_are_read_like_kubectl_reads_them(cli: Cli) -> None:
    # teastore-rabbitmq.yaml ends three lines with a tab: valid YAML that libyaml, kubectl
    # and kustomize read; it used to be refused (issue 22 changed this deliberately)
    folder = APPS / "teastore/examples/kubernetes"
    result = cli("detect", folder, "--namespace", "teastore", "--format", "json")
    assert result.json()["errors"] == []
    # the folder's variants repeat one app's objects: warnings, not errors
    variants = [f for f in result.json()["findings"] if f["detector"] == "object-variants"]
    assert len(variants) == 15 and {f["severity"] for f in variants} == {"warning"}
    assert result.rc == 1
    text = cli("detect", folder, "--namespace", "teastore")
    assert "in 26 objects from 9 files\n" in text.out


def test_a_kustomization_that_fails_to_build_exits_2(cli: Cli, tmp_path: Path) -> None:
    # the same ConfigMap twice: kustomize refuses it (a missing file never reaches
    # kustomize, which would try it as a remote: gitmedic refuses it first)
    write(
        tmp_path,
        {
            "kustomization.yaml": "resources:\n- a.yaml\n- again.yaml\n",
            "a.yaml": CM.format(name="a"),
            "again.yaml": CM.format(name="a"),
        },
    )
    result = cli("detect", tmp_path, "--format", "json")
    assert result.rc == 2
    (error,) = result.json()["errors"]
    assert (error["file"], error["line"]) == ("kustomization.yaml", 3)
    assert "kustomize build failed" in error["message"] and "again.yaml" in error["message"]


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_a_rev_that_does_not_exist_is_a_usage_error_with_empty_stdout(
    cli: Cli, tmp_path: Path, fmt: str
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, {"a.yaml": CM.format(name="a")})
    commit_all(repo)
    result = cli("detect", repo, "--rev", "v9.9.9", "--format", fmt)
    assert (result.rc, result.out) == (2, "")
    assert result.err.strip() == f"gitmedic: error: unknown revision 'v9.9.9' in {repo}"


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_path_that_does_not_exist_is_a_usage_error_with_empty_stdout(
    cli: Cli, tmp_path: Path, fmt: str
) -> None:
    result = cli("detect", tmp_path / "nope.yaml", "--format", fmt)
    assert (result.rc, result.out) == (2, "")
    assert (
        result.err.strip()
        == f"gitmedic: error: {tmp_path / 'nope.yaml'}: no such file or directory"
    )


def test_an_unknown_format_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli("detect", tmp_path, "--format", "xml")
    assert exc.value.code == 2


# -- bounded memory (fresh processes, so peak memory is this input's) -------------------
# How long these take is a benchmark's claim, not a unit test's: bench/bad_input.py times
# them against start-up and a bare parse (bench/RESULTS.md, "Bad input").

MEASURE = """
import resource, sys
from gitmedic.bot.cli.main import main
rc = main(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"MEASURE {rc} {peak}", file=sys.stderr)
"""


def measure(*argv: str | Path) -> tuple[int, int, str]:
    """Exit code, peak RSS in MiB, and stdout of one run."""
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    rc, rss_kib = proc.stderr.strip().splitlines()[-1].split()[1:]
    return int(rc), int(rss_kib) // 1024, proc.stdout


def baseline_rss(tmp_path: Path) -> int:
    return measure("detect", write_small(tmp_path / "small"), "--format", "json")[1]


def _contents(folder: Path) -> dict[str, str]:
    """What detect must leave as it was: each file's name and digest."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.integration
def test_a_50_mb_file_is_refused_without_being_read(tmp_path: Path) -> None:
    folder = write_huge(tmp_path / "big")
    assert (folder / "huge.yaml").stat().st_size > HUGE_BYTES
    before = _contents(folder)
    rc, rss, out = measure("detect", folder, "--format", "json")
    assert rc == 2
    assert rss < baseline_rss(tmp_path) + 20  # the file was never loaded (50+ MiB)
    (error,) = json.loads(out)["errors"]
    assert error["file"] == "huge.yaml" and "over the limit" in error["message"]
    assert _contents(folder) == before


@pytest.mark.integration
def test_an_alias_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    folder = write_bomb(tmp_path / "bomb")
    before = _contents(folder)
    rc, rss, out = measure("detect", folder, "--format", "json")
    assert rc == 2
    assert rss < baseline_rss(tmp_path) + 20
    (error,) = json.loads(out)["errors"]
    assert error["line"] == 10 and "alias bomb" in error["message"]
    assert _contents(folder) == before


@pytest.mark.integration
def test_a_tab_late_in_a_large_file_is_found_with_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    line = write_late_tab(folder)
    before = _contents(folder)
    rc, _, out = measure("detect", folder, "--format", "json")
    assert rc == 2
    (error,) = json.loads(out)["errors"]
    assert error["line"] == line and "tab character" in error["message"]
    assert _contents(folder) == before
