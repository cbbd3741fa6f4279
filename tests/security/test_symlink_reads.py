"""Symbolic links committed to the repository are never followed, by any reader.

Each test commits links to ``/etc/passwd``, to ``/proc/self/environ`` (the bot's
own environment, with a planted token), to ``.git/config`` and to a folder
outside the repository holding a manifest, then reads the repo the way gitmedic
does: ``gitmedic detect`` (work tree and ``--rev``) in a subprocess, the repo
model, the LLM's tools driven by a scripted model, the local forge's commits,
and the memory and config loaders. Nothing outside the repository is read, and
each refusal says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.memory.guard import check_memory
from gitmedic.bot.responder.responder import Responder
from gitmedic.reconciler.config import ConfigError
from gitmedic.reconciler.forge import Validation
from gitmedic.reconciler.git import Git, GitError
from gitmedic.reconciler.manifests.config_file import load_config
from gitmedic.reconciler.manifests.documents import EditError
from gitmedic.reconciler.manifests.load import LoadFailure, load_desired
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.conftest import isolate_git
from tests.responder.support import app_repo
from tests.responder.test_llm_strategy import FLAG, MODEL, OTEL, Scripted, flag_incident

PLANTED_ENV = "planted-environ-token-0451"
OUTSIDE_NAME = "outside-the-repo"
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""
# names under the app folder -> (what the link points at)
LINKS = ("passwd.yaml", "environ.yaml", "gitconfig.yaml", "elsewhere")


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path_factory, monkeypatch)
    monkeypatch.setenv("GITMEDIC_PLANTED", PLANTED_ENV)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def plant_links(root: Path, folder: str, outside: Path) -> list[str]:
    """Commit the four links into ``root/folder``; returns their repo-relative names."""
    outside.mkdir(exist_ok=True)
    (outside / "svc.yaml").write_text(SERVICE.replace("web", OUTSIDE_NAME))
    where = root / folder
    targets = {
        "passwd.yaml": "/etc/passwd",
        "environ.yaml": "/proc/self/environ",
        "gitconfig.yaml": os.path.relpath(root / ".git" / "config", where),
        "elsewhere": str(outside),
    }
    for name, target in targets.items():
        (where / name).symlink_to(target)
    Git(root).commit("links", ".")
    return [f"{folder}/{name}" for name in LINKS]


def leaked(text: str) -> list[str]:
    marks = ("root:x:0:0", PLANTED_ENV, "repositoryformatversion", OUTSIDE_NAME)
    return [m for m in marks if m in text]


@pytest.fixture
def plain_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "repo"
    (root / "apps" / "web").mkdir(parents=True)
    (root / "apps" / "web" / "svc.yaml").write_text(SERVICE)
    git = Git.init(root)
    git.commit("web", ".")
    return root, plant_links(root, "apps/web", tmp_path / "outside")


def gitmedic(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.integration
@pytest.mark.parametrize("rev", [None, "HEAD"])
def test_detect_refuses_every_link_and_reads_nothing_outside(
    plain_repo: tuple[Path, list[str]], rev: str | None
) -> None:
    root, links = plain_repo
    at = ["--rev", rev] if rev else []
    proc = gitmedic("detect", root / "apps", *at, "--format", "json")

    assert proc.returncode == 2, proc.stderr
    out = json.loads(proc.stdout)
    assert sorted(e["file"] for e in out["errors"]) == sorted(links)
    assert all("symbolic link" in e["message"] for e in out["errors"])
    assert leaked(proc.stdout + proc.stderr) == []


def test_the_repo_model_refuses_links_in_the_work_tree_and_at_a_revision(
    plain_repo: tuple[Path, list[str]],
) -> None:
    root, links = plain_repo
    repo = ManifestRepo(root)
    for link in [*links, "apps/web/elsewhere/svc.yaml"]:
        for rev in (None, "HEAD"):
            with pytest.raises(EditError, match=r"symbolic link|does not exist"):
                repo.read(link, rev)
    with pytest.raises(GitError, match="symbolic link"):
        repo.git.show_file("HEAD", "apps/web/passwd.yaml")
    assert {o.resource.name for o in repo.objects()} == {"web"}


def test_the_local_forge_never_commits_through_a_link(plain_repo: tuple[Path, list[str]]) -> None:
    root, _ = plain_repo
    forge = LocalForge(root)
    base = Git(root).head()
    for path in ("apps/web/passwd.yaml", "apps/web/elsewhere/svc.yaml"):
        with pytest.raises(Validation, match="symbolic link"):
            forge.commit_files("gitmedic/x/y", base, {path: "kind: Secret\n"}, "edit")
    assert Git(root).branches() == ["main"]


def test_memory_and_config_through_links_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    book = root / ".gitmedic" / "playbooks" / "leak"
    book.mkdir(parents=True)
    (book / "README.md").symlink_to("/etc/passwd")
    (root / ".gitmedic" / "config.yaml").symlink_to(root / ".git" / "config")
    Git.init(root).commit("memory", ".")

    problems = check_memory(root)

    assert sorted(p.path for p in problems) == [
        ".gitmedic/config.yaml",
        ".gitmedic/playbooks/leak/README.md",
    ]
    assert all("symbolic link" in p.message for p in problems)
    with pytest.raises(ConfigError, match="symbolic link"):
        load_config(root / ".gitmedic" / "config.yaml")


def test_the_llm_tools_read_and_edit_nothing_through_a_link(tmp_path: Path) -> None:
    app = app_repo(tmp_path / "repo", OTEL)
    incident, good = flag_incident(app)
    folder = str(Path(app.repo.path).parent)
    links = plant_links(app.git.root, folder, tmp_path / "outside")
    edit = {"file": links[0], "kind": "ConfigMap", "name": "flagd-config", "path": FLAG,
            "op": "set", "value": good}  # fmt: skip
    model = Scripted(
        [("read_file", {"path": link}) for link in [*links, f"{links[3]}/svc.yaml"]],
        [("list_files", {"prefix": folder}), ("read_architecture", {})],
        [("propose_edit", {**edit, "file": link}) for link in links],
        [("propose_edit", {**edit, "file": f"{links[3]}/svc.yaml"})],
        [("submit_diagnosis", {"summary": "links everywhere"})],
    )

    proposal = Responder(app.repo, llm=MODEL, completion=model).propose(incident)

    assert not proposal.edits
    assert len(proposal.rejected) == 5
    assert all("symbolic link" in r for r in proposal.rejected), proposal.rejected
    sent = "\n".join(model.sent)
    assert sent.count("symbolic link") >= 5 + 4  # five reads refused, four links listed
    assert leaked(sent) == []


@pytest.mark.parametrize("rev", [None, "HEAD"])
def test_a_path_through_a_linked_folder_is_refused(
    plain_repo: tuple[Path, list[str]], rev: str | None
) -> None:
    root, _ = plain_repo
    for path in (root / "apps/web/elsewhere", root / "apps/web/elsewhere/svc.yaml"):
        with pytest.raises(LoadFailure, match="symbolic link"):
            load_desired(path, rev=rev)
