"""The sliver of GitHub's GraphQL API the forge uses: revert a PR, enable auto-merge.

GraphQL answers 200 with ``errors`` when a mutation is refused, as GitHub's does.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.support.github_store import ApiError, GitHubStore


def graphql_route(app: FastAPI, s: GitHubStore) -> None:
    @app.post("/graphql")
    async def graphql(request: Request) -> Response:
        if not s.graphql_enabled:
            missing = {
                "message": "Not Found",
                "documentation_url": "https://docs.github.com/graphql",
            }
            return JSONResponse(missing, status_code=404)
        body = await request.json()
        query, variables = body.get("query", ""), body.get("variables") or {}
        given = variables.get("input") or variables
        pr_id = str(given.get("id") or given.get("pullRequestId") or "")
        number = int(pr_id.removeprefix("PR_")) if pr_id.startswith("PR_") else 0
        if number not in s.pulls:
            message = f"Could not resolve to a node with the global id of '{pr_id}'"
            return _graphql_errors(message, "NOT_FOUND")
        try:
            if "revertPullRequest" in query:
                made = _graphql_revert(s, number, given.get("title"), given.get("body"))
                return JSONResponse({"data": {"revertPullRequest": {"revertPullRequest": made}}})
            if "enablePullRequestAutoMerge" in query:
                return JSONResponse(_graphql_auto_merge(s, number, given))
        except ApiError as exc:
            return _graphql_errors(exc.message, "UNPROCESSABLE")
        return _graphql_errors("unsupported operation in the stand-in", "UNPROCESSABLE")


def _graphql_errors(message: str, kind: str) -> Response:
    return JSONResponse({"data": None, "errors": [{"type": kind, "message": message}]})


def _graphql_auto_merge(s: GitHubStore, number: int, given: dict[str, Any]) -> dict[str, Any]:
    if not s.allow_auto_merge:
        raise ApiError(422, "Pull request Auto merge is not allowed for this repository")
    if s.pulls[number]["state"] != "open":
        raise ApiError(422, "Pull request is in clean status")
    method = str(given.get("mergeMethod", "MERGE"))
    s.auto_merge[number] = method.lower()
    merge_request = {"mergeMethod": method}
    return {
        "data": {
            "enablePullRequestAutoMerge": {
                "pullRequest": {"number": number, "autoMergeRequest": merge_request}
            }
        }
    }


def _graphql_revert(
    s: GitHubStore, number: int, title: str | None, body: str | None
) -> dict[str, Any]:
    pr = s.pulls[number]
    if pr["state"] != "merged":
        raise ApiError(422, "Pull request is not merged")
    branch = f"revert-{number}-{pr['head']}"
    if s.branch_sha(branch) is not None:
        raise ApiError(422, f"A branch named '{branch}' already exists")
    base = s.branch_sha(pr["base"])
    assert base is not None
    sha = s.revert_commit(
        base, pr["merge_sha"], f'Revert "{pr["title"]}"\n\nThis reverts #{number}.'
    )
    s.git("update-ref", f"refs/heads/{branch}", sha)
    n = s.next_number()
    s.pulls[n] = {
        "number": n,
        "id": s.new_id(),
        "title": title or f'Revert "{pr["title"]}"',
        "body": body if body is not None else f"Reverts {s.full_name}#{number}",
        "head": branch,
        "base": pr["base"],
        "state": "open",
        "labels": [],
        "user": "gitmedic[bot]",
        "head_sha": sha,
    }
    return {
        "number": n,
        "id": f"PR_{n}",
        "headRefName": branch,
        "url": f"https://github.com/{s.full_name}/pull/{n}",
    }
