"""One render cannot cost unbounded time, bytes or objects.

The attack: a nine-line chart template looping 100,000 times (on the uncapped
code, ``gitmedic detect`` spent minutes rendering and parsing it, twice). Under
the caps the render is an error naming the chart, exit 2: by the object count
with the defaults, by the deadline or the byte cap when the work tree's config
sets them lower. A kustomization is capped the same way. The cap is never a
verdict: the app has no desired objects and an error, not a clean bill.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmedic.reconciler.git import Git
from gitmedic.reconciler.manifests.load import load_desired
from tests.conftest import isolate_git

LOOP = """\
{{- range $i := until 100000 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
data:
  i: "{{ $i }}"
{{- end }}
"""
CHART = "apiVersion: v2\nname: loop\nversion: 0.1.0\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: b}\n"


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)


def loop_chart(tmp_path: Path, config: str = "") -> Path:
    root = tmp_path / "repo"
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text(CHART)
    (root / "chart" / "templates" / "loop.yaml").write_text(LOOP)
    assert len(LOOP.splitlines()) == 9
    if config:
        (root / ".gitmedic").mkdir()
        (root / ".gitmedic" / "config.yaml").write_text(config)
    Git.init(root).commit("a looping chart", ".")
    return root


def detect(path: Path) -> tuple[int, dict[str, list[dict[str, object]]], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    return proc.returncode, json.loads(proc.stdout), time.monotonic() - started


def config(caps: str) -> str:
    return f"version: 1\napps: [{{name: loop, path: chart}}]\nmanifests: {{{caps}}}\n"


@pytest.mark.integration
@pytest.mark.usefixtures("helm_on_path")
@pytest.mark.parametrize(
    "caps, said",
    [
        ("", "more than 20,000 objects (manifests.max_rendered_objects)"),
        # the other caps out of reach, so only the deadline can stop it however fast
        # the machine renders (on an idle one helm reached the object cap within 3 s)
        (
            "render_timeout_s: 1, max_rendered_objects: 100000000, max_rendered_bytes: 10000000000",
            "did not finish within 1 s (manifests.render_timeout_s)",
        ),
        ("max_rendered_bytes: 100000", "more than 100,000 bytes (manifests.max_rendered_bytes)"),
    ],
    ids=["objects", "deadline", "bytes"],
)
def test_a_looping_chart_stops_with_an_error_naming_it(
    tmp_path: Path, caps: str, said: str
) -> None:
    root = loop_chart(tmp_path, config(caps) if caps else "")

    code, out, took = detect(root / "chart")

    assert code == 2
    (error,) = out["errors"]
    assert error["file"] == "chart/Chart.yaml"
    assert str(error["message"]).startswith("helm template ") and said in str(error["message"])
    assert out["findings"] == []
    assert took < 90  # uncapped, minutes


def kustomization(tmp_path: Path, caps: str) -> Path:
    root = tmp_path / "repo"
    (root / "k").mkdir(parents=True)
    names = ["a", "b", "c"]
    for n in names:
        (root / "k" / f"{n}.yaml").write_text(CM % n)
    (root / "k" / "kustomization.yaml").write_text(f"resources: {[f'{n}.yaml' for n in names]}\n")
    (root / ".gitmedic").mkdir()
    (root / ".gitmedic" / "config.yaml").write_text(
        f"version: 1\napps: [{{name: k, path: k}}]\nmanifests: {{{caps}}}\n"
    )
    Git.init(root).commit("k", ".")
    return root


def test_a_kustomization_over_the_object_cap_is_an_error_naming_it(tmp_path: Path) -> None:
    root = kustomization(tmp_path, "max_rendered_objects: 2")

    state = load_desired(root / "k")

    (error,) = state.errors
    assert error.file == "k/kustomization.yaml"
    assert "kustomize build of k rendered 3 documents, more than 2 objects" in error.message
    assert list(state.snapshot) == []


def test_a_kustomization_over_the_byte_cap_is_stopped(tmp_path: Path) -> None:
    root = kustomization(tmp_path, "max_rendered_bytes: 64")

    state = load_desired(root / "k")

    (error,) = state.errors
    assert "more than 64 bytes (manifests.max_rendered_bytes) and was stopped" in error.message


def test_within_the_caps_a_kustomization_renders(tmp_path: Path) -> None:
    root = kustomization(tmp_path, "max_rendered_objects: 3")

    state = load_desired(root / "k")

    assert state.errors == [] and len(list(state.snapshot)) == 3


def test_a_process_past_the_byte_cap_is_killed_while_it_streams() -> None:
    from gitmedic.reconciler.manifests.render_caps import RenderCapError, RenderCaps, run_capped

    caps = RenderCaps(bytes=1_000_000, seconds=600)
    with pytest.raises(RenderCapError, match=r"more than 1,000,000 bytes .* and was stopped"):
        run_capped(["yes"], env={}, cwd="/", caps=caps, deadline=time.monotonic() + 600)


def test_a_process_past_the_deadline_is_killed() -> None:
    from gitmedic.reconciler.manifests.render_caps import RenderCapError, RenderCaps, run_capped

    caps = RenderCaps(seconds=7)
    spin = ["sh", "-c", "while :; do :; done"]
    with pytest.raises(RenderCapError, match=r"did not finish within 7 s"):
        run_capped(spin, env={}, cwd="/", caps=caps, deadline=time.monotonic())


def test_documents_are_counted_before_any_is_parsed() -> None:
    from gitmedic.reconciler.manifests.render_caps import (
        RenderCapError,
        RenderCaps,
        count_documents,
    )

    caps = RenderCaps(objects=2)
    count_documents("---\na: 1\n---\nb: 2\n", caps)
    count_documents("a: 1\n---\nb: 2\n", caps)
    with pytest.raises(RenderCapError, match="rendered 3 documents, more than 2 objects"):
        count_documents("a: 1\n---\nb: 2\n---\nc: 3\n", caps)


@pytest.mark.integration
def test_an_app_of_plain_files_over_the_object_cap_is_refused_through_detect(
    tmp_path: Path,
) -> None:
    """The cap is per app: plain files, which no renderer streams, count as well."""
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    for part in ("one", "two"):
        docs = "---\n".join(CM % f"{part}-{i}" for i in range(3))
        (root / "app" / f"{part}.yaml").write_text(docs)
    (root / ".gitmedic").mkdir()
    (root / ".gitmedic" / "config.yaml").write_text(
        "version: 1\napps: [{name: app, path: app}]\nmanifests: {max_rendered_objects: 5}\n"
    )
    Git.init(root).commit("app", ".")
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(root / "app"), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    (error,) = json.loads(done.stdout)["errors"]
    assert "has 6 objects, more than 5 (manifests.max_rendered_objects)" in error["message"]
    assert json.loads(done.stdout)["findings"] == []
