"""``GET /repos/{owner}/{repo}/compare/{base}...{head}`` of the GitHub stand-in."""

from __future__ import annotations

import urllib.parse
from typing import Any

from fastapi import FastAPI

from tests.support.github_store import ApiError, GitHubStore

R = "/repos/{owner}/{repo}"


def compare_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get(R + "/compare/{basehead:path}")
    def compare(owner: str, repo: str, basehead: str) -> dict[str, Any]:
        base_ref, sep, head_ref = basehead.partition("...")
        if not sep:
            raise ApiError(404, "Not Found")
        base, head = s.resolve(base_ref), s.resolve(head_ref)
        fork = s.git("merge-base", base, head, check=False)
        if not fork:
            raise ApiError(404, f"No common ancestor between {base_ref} and {head_ref}.")
        ahead = s.git("rev-list", f"{base}..{head}").split()
        behind = int(s.git("rev-list", "--count", f"{head}..{base}"))
        status = {
            (True, True): "identical",
            (False, True): "ahead",
            (True, False): "behind",
        }.get((not ahead, behind == 0), "diverged")
        files = _diff_files(s, fork, head)
        html = f"https://github.com/{s.full_name}/compare/{basehead}"
        return {
            "url": f"{s.repo_url}/compare/{basehead}",
            "html_url": html,
            "permalink_url": f"https://github.com/{s.full_name}/compare/{base}...{head}",
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": behind,
            "total_commits": len(ahead),
            "base_commit": _rest_commit(s, base),
            "merge_base_commit": _rest_commit(s, fork),
            "commits": [_rest_commit(s, sha) for sha in reversed(ahead)],
            "files": files,
        }


def _diff_files(s: GitHubStore, old: str, new: str) -> list[dict[str, Any]]:
    """The files of a compare, with GitHub's counts and URLs."""
    kinds = {"A": "added", "D": "removed", "M": "modified", "T": "changed"}
    counts: dict[str, tuple[int, int]] = {}
    for line in s.git("diff", "--numstat", "--no-renames", old, new).splitlines():
        plus, minus, name = line.split("\t", 2)  # "-" for a binary file
        counts[name] = (int(plus) if plus != "-" else 0, int(minus) if minus != "-" else 0)
    files = []
    for line in s.git("diff", "--name-status", "--no-renames", old, new).splitlines():
        code, name = line.split("\t", 1)
        side = old if code[0] == "D" else new
        blob = s.git("rev-parse", f"{side}:{name}")
        added, deleted = counts.get(name, (0, 0))
        path = urllib.parse.quote(name)
        files.append(
            {
                "sha": blob,
                "filename": name,
                "status": kinds.get(code[0], "modified"),
                "additions": added,
                "deletions": deleted,
                "changes": added + deleted,
                "blob_url": f"https://github.com/{s.full_name}/blob/{side}/{path}",
                "raw_url": f"https://github.com/{s.full_name}/raw/{side}/{path}",
                "contents_url": f"{s.repo_url}/contents/{path}?ref={side}",
            }
        )
    return files


def _rest_commit(s: GitHubStore, sha: str) -> dict[str, Any]:
    git = s.commit_json(sha)
    commit = {k: git[k] for k in ("author", "committer", "message", "tree", "url")}
    return {
        "sha": sha,
        "node_id": git["node_id"],
        "url": f"{s.repo_url}/commits/{sha}",
        "html_url": git["html_url"],
        "comments_url": f"{s.repo_url}/commits/{sha}/comments",
        "commit": {**commit, "comment_count": 0},
        "author": None,  # no GitHub account matches the commit's email
        "committer": None,
        "parents": git["parents"],
    }
