"""The other apps of one app's namespace, rendered once for both of their uses at start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitmedic.reconciler.manifests import shared_namespace
from gitmedic.reconciler.manifests.config_file import load_config
from gitmedic.reconciler.manifests.shared_namespace import neighbours

CONFIG = """version: 1
apps:
  - {name: dev, path: apps/dev, namespace: team}
  - {name: staging, path: apps/staging, namespace: team}
  - {name: tools, path: apps/tools, namespace: ops}
"""


def _service(name: str, namespace: str) -> str:
    return f"""apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80}}]
"""


def _repo(tmp_path: Path, staging_name: str) -> Path:
    (tmp_path / ".gitmedic").mkdir()
    (tmp_path / ".gitmedic" / "config.yaml").write_text(CONFIG)
    for app, name, ns in (("dev", "dev-web", "team"), ("staging", staging_name, "team")):
        (tmp_path / "apps" / app).mkdir(parents=True)
        (tmp_path / "apps" / app / "web.yaml").write_text(_service(name, ns))
    (tmp_path / "apps" / "tools").mkdir()
    (tmp_path / "apps" / "tools" / "web.yaml").write_text(_service("dev-web", "ops"))
    return tmp_path


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders rendered, in order."""
    seen: list[str] = []
    real = shared_namespace.load_desired

    def counted(root: Path, **kw: Any) -> Any:
        seen.append(root.name)
        return real(root, **kw)

    monkeypatch.setattr(shared_namespace, "load_desired", counted)
    return seen


def test_each_app_of_the_namespace_is_rendered_once(tmp_path: Path, renders: list[str]) -> None:
    repo = _repo(tmp_path, "staging-web")
    config = load_config(repo / ".gitmedic" / "config.yaml")
    dev = config.apps[0]
    found = neighbours(repo, config, dev)
    assert found.collision is None
    assert [(o.kind, o.name) for o in found.rendered] == [("Service", "staging-web")]
    assert renders == ["dev", "staging"]  # the ops app, same names elsewhere, not at all


def test_a_sibling_rendering_the_same_object_is_the_collision(
    tmp_path: Path, renders: list[str]
) -> None:
    repo = _repo(tmp_path, "dev-web")
    config = load_config(repo / ".gitmedic" / "config.yaml")
    found = neighbours(repo, config, config.apps[1])
    assert found.collision is not None
    assert (found.collision.first, found.collision.second) == ("staging", "dev")
    assert "render Service/team/dev-web into namespace team" in found.collision.message()
    assert renders == ["staging", "dev"]


def test_an_app_alone_in_its_namespace_renders_nothing(tmp_path: Path, renders: list[str]) -> None:
    repo = _repo(tmp_path, "staging-web")
    config = load_config(repo / ".gitmedic" / "config.yaml")
    found = neighbours(repo, config, config.apps[2])
    assert found.rendered == () and found.collision is None
    assert renders == []


def test_a_neighbour_that_does_not_render_is_said_with_its_file_and_line(
    tmp_path: Path, renders: list[str]
) -> None:
    """Never read as a neighbour rendering nothing: its objects are unknown, and why."""
    repo = _repo(tmp_path, "staging-web")
    (repo / "apps" / "staging" / "kustomization.yaml").write_text(
        "resources:\n  - web.yaml\n  - gone.yaml\n"
    )
    config = load_config(repo / ".gitmedic" / "config.yaml")
    dev = config.apps[0]
    found = neighbours(repo, config, dev)
    assert [u.app for u in found.unrendered] == ["staging"]
    # outside a git work tree the file is named from the app's folder
    assert found.unrendered[0].why.startswith("kustomization.yaml:3: resources:")
    assert [(o.kind, o.name) for o in found.own] == [("Service", "dev-web")]
    said = found.undivided(dev)
    assert "cannot tell app dev's objects apart" in said and "namespace team" in said
    assert "staging does not render (kustomization.yaml:3: " in said


def test_a_neighbour_whose_folder_is_gone_is_unrendered_too(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "staging-web")
    (repo / "apps" / "staging" / "web.yaml").unlink()
    (repo / "apps" / "staging").rmdir()
    config = load_config(repo / ".gitmedic" / "config.yaml")
    found = neighbours(repo, config, config.apps[0])
    (gone,) = found.unrendered
    assert gone.app == "staging" and "apps/staging: no such file or directory" in gone.why
    assert found.rendered == ()


def test_neighbours_that_render_leave_the_app_divided(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "staging-web")
    config = load_config(repo / ".gitmedic" / "config.yaml")
    found = neighbours(repo, config, config.apps[0])
    assert found.unrendered == () and found.undivided(config.apps[0]) == ""
