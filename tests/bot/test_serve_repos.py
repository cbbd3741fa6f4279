"""``serve --repos FILE``: the service config read strictly, every problem at its line
(bot.service.repos)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import cast

import pytest

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.service.repos import RepoEntry, load_repos, repo_state_dir, repos_file
from gitmedic.sim.faults.git import init_repo


def git_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "README.md").write_text("manifests\n")
    init_repo(path)
    return path


def written(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "repos.yaml"
    file.write_text(text)
    return file


def problems(file: Path, forge: str = "local") -> str:
    with pytest.raises(UsageError) as caught:
        load_repos(file, forge)
    return str(caught.value)


def test_local_entries_are_folders_beside_the_file_named_by_folder_or_name(tmp_path: Path) -> None:
    shop, blog = git_folder(tmp_path / "shop"), git_folder(tmp_path / "sites" / "blog")
    file = written(
        tmp_path,
        "repositories:\n"
        "  - repo: shop\n"
        "  - repo: sites/blog\n"
        "    name: alice/blog\n"
        "    path: apps/web\n"
        "    namespace: web\n",
    )
    assert load_repos(file, "local") == [
        RepoEntry("shop", str(shop), line=2),
        RepoEntry("alice/blog", str(blog), "apps/web", "web", line=3),
    ]


def test_github_entries_are_owner_name_with_an_optional_clone_url(tmp_path: Path) -> None:
    file = written(
        tmp_path,
        "repositories:\n  - repo: acme/shop\n  - {repo: acme/blog, clone_url: /srv/blog.git}\n",
    )
    assert load_repos(file, "github") == [
        RepoEntry("acme/shop", "acme/shop", line=2),
        RepoEntry("acme/blog", "acme/blog", clone_url="/srv/blog.git", line=3),
    ]


def test_unknown_keys_missing_repo_and_a_repository_twice_are_said_each_at_its_line(
    tmp_path: Path,
) -> None:
    file = written(
        tmp_path,
        "repositories:\n"
        "  - repo: acme/shop\n"
        "  - repo: acme/blog\n"
        "    paths: apps/web\n"  # line 4: a misspelt key
        "  - path: apps/blog\n"  # line 5: no repo
        "  - repo: ACME/shop\n"  # line 6: the first again (GitHub's names ignore case)
        "extra: 1\n",  # line 7: not a key of the file
    )
    said = problems(file, "github")
    assert said.splitlines() == [
        f"{file} is invalid:",
        f"  - {file}:7: extra: unknown key (the file has only 'repositories')",
        f"  - {file}:4: repositories[1].paths: unknown key "
        "(allowed: repo, name, path, namespace, clone_url)",
        f"  - {file}:5: repositories[2]: missing 'repo' (a folder, or owner/name on GitHub)",
        f"  - {file}:6: repositories[3]: name acme/shop is listed twice (first: repositories[0])",
    ]


def test_a_duplicated_key_or_bad_yaml_is_said_at_its_line(tmp_path: Path) -> None:
    file = written(tmp_path, "repositories:\n  - repo: acme/a\n    repo: acme/b\n")
    assert problems(file, "github") == f"{file}:3: invalid YAML: duplicate key 'repo'"


@pytest.mark.parametrize(
    ("text", "forge", "said"),
    [
        ("repositories: []\n", "github", ":1: repositories: missing, or not a non-empty list"),
        ("- repo: acme/a\n", "github", ":1: (top level): a mapping with 'repositories'"),
        ("repositories:\n  - acme/a\n", "github", ":2: repositories[0]: each repository is a"),
        ("repositories:\n  - repo: shop\n", "github", ":2: repositories[0].repo: not owner/name"),
        ("repositories:\n  - {repo: a/b, name: x}\n", "github", ":2: repositories[0].name: the"),
        ("repositories:\n  - repo: nowhere\n", "local", ":2: repositories[0].repo: /"),
        ("repositories:\n  - {repo: a/b, path: ../up}\n", "github", ":2: repositories[0].path:"),
        (
            "repositories:\n  - {repo: a/b, namespace: Web}\n",
            "github",
            ":2: repositories[0].namespace: not a",
        ),
        (
            "repositories:\n  - {repo: a/b, path: 3}\n",
            "github",
            ":2: repositories[0].path: not a non-empty",
        ),
    ],
)
def test_each_kind_of_problem_names_the_file_and_line(
    tmp_path: Path, text: str, forge: str, said: str
) -> None:
    file = written(tmp_path, text)
    assert f"{file}{said}" in problems(file, forge)


def test_a_local_folder_listed_twice_under_two_names_is_refused(tmp_path: Path) -> None:
    git_folder(tmp_path / "shop")
    file = written(
        tmp_path, "repositories:\n  - {repo: shop, name: a}\n  - {repo: ./shop, name: b}\n"
    )
    assert f"{file}:3: repositories[1]: repository {tmp_path / 'shop'} is listed twice" in (
        problems(file)
    )


def args(**given: object) -> argparse.Namespace:
    flags = {"repos": None, "repo": None, "path": None, "app": None, "watch": None}
    return argparse.Namespace(**{**flags, **given})


def test_the_file_comes_from_the_flag_or_the_environment_and_excludes_one_repo_flags() -> None:
    assert repos_file(args(), {}) is None
    assert repos_file(args(), {"GITMEDIC_REPOS": "/etc/repos.yaml"}) == Path("/etc/repos.yaml")
    assert repos_file(args(repos="r.yaml"), {"GITMEDIC_REPOS": "x"}) == Path("r.yaml")
    with pytest.raises(UsageError, match="--repo, --path name one repository"):
        repos_file(args(repos="r.yaml", repo=".", path="apps/web"), {})
    clone = {"GITMEDIC_CLONE_URL": "https://git.example/acme/shop.git"}
    with pytest.raises(UsageError, match="GITMEDIC_CLONE_URL names one repository's clone"):
        repos_file(args(repos="r.yaml"), clone)
    with pytest.raises(UsageError, match="each entry of the file its own clone_url"):
        repos_file(args(), {**clone, "GITMEDIC_REPOS": "/etc/repos.yaml"})
    assert repos_file(args(), clone) is None, "one repository: its clone URL, as before"


def test_each_repository_has_its_own_state_folder(tmp_path: Path) -> None:
    folders = {repo_state_dir(tmp_path, n) for n in ("acme/shop", "acme%2Fshop", "acme", "shop")}
    assert len(folders) == 4
    assert all(f.parent == tmp_path / "repos" for f in folders)


def test_each_github_repository_is_cloned_under_its_own_state_folder(tmp_path: Path) -> None:
    from gitmedic.bot.service.settings import ServeSettings
    from gitmedic.bot.service.worlds import worlds_of

    bares = {}
    for name in ("shop", "blog"):
        work = git_folder(tmp_path / "work" / name)
        bares[name] = tmp_path / f"{name}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bares[name])], check=True)
    file = written(
        tmp_path,
        "repositories:\n"
        f"  - {{repo: acme/shop, clone_url: {bares['shop']}}}\n"
        f"  - {{repo: acme/blog, clone_url: {bares['blog']}, path: apps/web}}\n",
    )
    settings = ServeSettings("s", tmp_path / "state", Path("."))
    env = {"GITHUB_TOKEN": "ghp_" + "0" * 36, "GITHUB_API_URL": "http://127.0.0.1:9"}
    shop, blog = worlds_of(
        settings, args(namespace=None), env, "github", load_repos(file, "github")
    )
    assert [w.name for w in (shop, blog)] == ["acme/shop", "acme/blog"]
    slugs = [
        f"{getattr(w.forge, 'owner', '')}/{getattr(w.forge, 'name', '')}" for w in (shop, blog)
    ]
    assert slugs == ["acme/shop", "acme/blog"]
    assert shop.repo == tmp_path / "state" / "repos" / "acme%2Fshop" / "clone"
    assert (blog.repo / "README.md").exists() and (shop.repo / "README.md").exists()
    assert (shop.args and shop.args.path, blog.args and blog.args.path) == (None, "apps/web")


def test_one_postgresql_journal_for_every_repository_needs_distinct_app_names(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from gitmedic.bot.service.worlds import RepoWorld, check_one_journal
    from gitmedic.reconciler.forge import Forge

    forge = cast(Forge, SimpleNamespace())
    shop, blog = (RepoWorld(forge, tmp_path, lambda: None, n) for n in ("acme/shop", "acme/blog"))
    web = [SimpleNamespace(app="web")]
    url = {"GITMEDIC_JOURNAL_URL": "postgresql://gm@db/gm"}
    check_one_journal([shop, blog], [web, web], {})  # a SQLite journal per repository
    check_one_journal([shop, blog], [web, [SimpleNamespace(app="blog")]], url)
    with pytest.raises(ValueError, match="app web is in acme/shop and in acme/blog"):
        check_one_journal([shop, blog], [web, web], url)
