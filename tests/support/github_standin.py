"""A local GitHub REST (and a sliver of GraphQL) stand-in, served over real HTTP.

PyGithub talks to it exactly as to api.github.com: same paths, verbs, status
codes and payload shapes (built from recorded GitHub payloads). Errors can be
injected per method and path (404, 405/409 on merge, 422, 403/429 rate limits
with Retry-After or x-ratelimit-reset, 5xx) to test the forge's typed errors.
It behaves as GitHub does where the forge must cope (:mod:`.github_behaviour`):
text limits, paginated listings with ``Link`` headers, replication lag of new
refs, the primary rate limit, expiring installation tokens, lazy ``mergeable``.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.support import github_behaviour as behaviour
from tests.support import github_conformance as conformance
from tests.support.github_apps import app_routes, check_credentials
from tests.support.github_compare import compare_routes
from tests.support.github_graphql import graphql_route
from tests.support.github_store import NOW, TEMPLATES, ApiError, GitHubStore

R = "/repos/{owner}/{repo}"


def make_app(store: GitHubStore) -> FastAPI:
    app = FastAPI()

    @app.middleware("http")
    async def held_to_the_description(request: Request, call_next: Any) -> Response:
        """Every request and reply checked against GitHub's description (not GraphQL's)."""
        if request.url.path == "/graphql" or not store.conform:
            return await faults_and_headers(request, call_next)
        sent = await request.body()
        check = conformance.Exchange(request.method, request.url.path, dict(request.query_params))
        store.checked += 1
        store.violations += check.request(sent)
        response = await faults_and_headers(request, call_next)
        if hasattr(response, "body_iterator"):  # a route's reply streams through
            body = b"".join([bytes(chunk) async for chunk in response.body_iterator])
        else:  # an error the middleware itself answered
            body = bytes(response.body)
        store.violations += check.reply(response.status_code, body)
        return Response(body, response.status_code, dict(response.headers))

    async def faults_and_headers(request: Request, call_next: Any) -> Response:
        store.requests.append((request.method, request.url.path))
        fault = store.take_fault(request.method, request.url.path)
        if fault is not None:
            return _error(fault.status, fault.message, fault.headers, fault.errors)
        refusal = check_credentials(store, request)
        if refusal is not None:
            return _error(401, refusal, {})
        if not store.rate.take():
            limited = {**store.rate.headers(), "X-RateLimit-Remaining": "0"}
            return _error(403, "API rate limit exceeded for installation.", limited)
        response: Response = await call_next(request)
        response.headers.update(store.rate.headers())
        return response

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        return _error(exc.status, exc.message, exc.headers)

    @app.exception_handler(behaviour.TooLong)
    async def too_long(request: Request, exc: behaviour.TooLong) -> Response:
        return JSONResponse(behaviour.too_long_error(str(exc)), status_code=422)

    _repo_routes(app, store)
    app_routes(app, store)
    _git_routes(app, store)
    _pull_routes(app, store)
    _issue_routes(app, store)
    _status_routes(app, store)
    compare_routes(app, store)
    graphql_route(app, store)
    return app


def _error(
    status: int, message: str, headers: dict[str, str], errors: list[Any] | None = None
) -> Response:
    body: dict[str, Any] = {"message": message, "documentation_url": "https://docs.github.com/rest"}
    if errors is not None:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, headers=headers)


def _repo_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get(R)
    def get_repo(owner: str, repo: str) -> dict[str, Any]:
        return s.repo_json()

    @app.get("/rate_limit")
    def rate_limit() -> dict[str, Any]:
        window = s.rate
        left = max(window.limit - window.used, 0)
        core = {
            "limit": window.limit,
            "remaining": left,
            "reset": int(window.reset),
            "used": window.used,
        }
        return {"resources": {"core": core, "graphql": core}, "rate": core}

    @app.get(R + "/collaborators/{user}/permission")
    def permission(owner: str, repo: str, user: str) -> dict[str, Any]:
        level = s.permissions.get(user, "none")
        legacy = {"maintain": "write", "triage": "read"}.get(level, level)
        collaborator = {**s.user(user), "role_name": level}
        return {"permission": legacy, "role_name": level, "user": collaborator}

    @app.get(R + "/contents/{path:path}")
    def contents(owner: str, repo: str, path: str, ref: str = "main") -> dict[str, Any]:
        sha = s.git("rev-parse", "--verify", "--quiet", f"{s.resolve(ref)}:{path}", check=False)
        if not sha:
            raise ApiError(404, "Not Found")
        data = s.git("cat-file", "blob", sha).encode()
        return {
            "type": "file",
            "encoding": "base64",
            "path": path,
            "name": path.rsplit("/", 1)[-1],
            "sha": sha,
            "size": len(data),
            "content": base64.b64encode(data).decode(),
            "url": f"{s.repo_url}/contents/{path}",
        }


def _git_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get(R + "/git/ref/{ref:path}")
    def get_ref(owner: str, repo: str, ref: str) -> dict[str, Any]:
        sha = s.git("rev-parse", "--verify", "--quiet", f"refs/{ref}", check=False)
        if not sha or s.lag.missing(ref.removeprefix("heads/")):
            raise ApiError(404, "Not Found")
        return s.ref_json(f"refs/{ref}", sha)

    @app.post(R + "/git/refs", status_code=201)
    async def create_ref(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        if s.git("rev-parse", "--verify", "--quiet", body["ref"], check=False):
            raise ApiError(422, "Reference already exists")
        s.git("update-ref", body["ref"], s.resolve(body["sha"]))
        s.lag.created(body["ref"])
        return s.ref_json(body["ref"], body["sha"])

    @app.patch(R + "/git/refs/{ref:path}")
    async def update_ref(owner: str, repo: str, ref: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        old = s.git("rev-parse", "--verify", "--quiet", f"refs/{ref}", check=False)
        if not old:
            raise ApiError(422, "Reference does not exist")
        if not body.get("force") and not _is_ancestor(s, old, body["sha"]):
            raise ApiError(422, "Update is not a fast forward")
        s.git("update-ref", f"refs/{ref}", body["sha"])
        return s.ref_json(f"refs/{ref}", body["sha"])

    @app.delete(R + "/git/refs/{ref:path}", status_code=204)
    def delete_ref(owner: str, repo: str, ref: str) -> Response:
        if not s.git("rev-parse", "--verify", "--quiet", f"refs/{ref}", check=False):
            raise ApiError(422, "Reference does not exist")
        s.git("update-ref", "-d", f"refs/{ref}")
        for pr in s.pulls.values():
            if f"heads/{pr['head']}" == ref and pr["state"] == "open":
                pr["state"] = "closed"
        return Response(status_code=204)

    @app.get(R + "/git/commits/{sha}")
    def get_commit(owner: str, repo: str, sha: str) -> dict[str, Any]:
        return s.commit_json(s.resolve(sha))

    @app.post(R + "/git/commits", status_code=201)
    async def create_commit(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        parents = [x for p in body.get("parents", []) for x in ("-p", p)]
        author = body.get("author") or {}
        sha = s.git(
            "commit-tree",
            body["tree"],
            *parents,
            "-m",
            body["message"],
            env={
                "GIT_AUTHOR_NAME": author.get("name", "GitHub"),
                "GIT_AUTHOR_EMAIL": author.get("email", "noreply@github.com"),
            },
        )
        return s.commit_json(sha)

    @app.post(R + "/git/blobs", status_code=201)
    async def create_blob(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        raw = body["content"].encode()
        data = base64.b64decode(raw) if body.get("encoding") == "base64" else raw
        sha = s.git("hash-object", "-w", "--stdin", input=data)
        return {"sha": sha, "url": f"{s.repo_url}/git/blobs/{sha}"}

    @app.get(R + "/git/trees/{sha}")
    def get_tree(owner: str, repo: str, sha: str, recursive: str = "") -> dict[str, Any]:
        args = ["ls-tree", "-r", "-t"] if recursive else ["ls-tree"]
        entries = []
        for line in s.git(*args, sha).splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, obj = meta.split()
            entries.append(
                {
                    "path": path,
                    "mode": mode,
                    "type": kind,
                    "sha": obj,
                    "url": f"{s.repo_url}/git/{kind}s/{obj}",
                }
            )
        tree_sha = s.git("rev-parse", f"{sha}^{{tree}}")
        return {
            "sha": tree_sha,
            "url": f"{s.repo_url}/git/trees/{tree_sha}",
            "tree": entries,
            "truncated": False,
        }

    @app.post(R + "/git/trees", status_code=201)
    async def create_tree(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        sha = _build_tree(s, body.get("base_tree"), body["tree"])
        return get_tree(owner, repo, sha, recursive="1")


def _is_ancestor(s: GitHubStore, old: str, new: str) -> bool:
    import subprocess

    proc = subprocess.run(
        ["git", "merge-base", "--is-ancestor", old, new],
        cwd=s.git_dir,
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def _build_tree(s: GitHubStore, base_tree: str | None, entries: list[dict[str, Any]]) -> str:
    """Apply tree entries (path, mode, sha|content|null) onto base_tree with a temp index."""
    import os
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(prefix="gh-index-") as index:
        env = {**os.environ, "GIT_INDEX_FILE": index.name}

        def run(*args: str, data: bytes | None = None) -> str:
            proc = subprocess.run(
                ["git", *args], cwd=s.git_dir, env=env, input=data, capture_output=True, check=False
            )
            if proc.returncode != 0:
                raise ApiError(422, f"tree: {proc.stderr.decode().strip()}")
            return proc.stdout.decode().strip()

        os.unlink(index.name)
        if base_tree:
            run("read-tree", base_tree)
        for e in entries:
            if e.get("sha") is None and "content" not in e:
                # mode 0 removes the entry (--force-remove wants a work tree)
                run("update-index", "--index-info", data=f"0 {'0' * 40}\t{e['path']}\n".encode())
                continue
            sha = e.get("sha") or s.git("hash-object", "-w", "--stdin", input=e["content"].encode())
            run("update-index", "--add", "--cacheinfo", f"{e['mode']},{sha},{e['path']}")
        tree = run("write-tree")
        open(index.name, "a").close()  # NamedTemporaryFile deletes it on exit
        return tree


def _pull_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get(R + "/pulls")
    def list_pulls(
        request: Request,
        response: Response,
        owner: str,
        repo: str,
        state: str = "open",
        head: str = "",
        base: str = "",
        per_page: int = behaviour.DEFAULT_PER_PAGE,
        page: int = 1,
    ) -> list[dict[str, Any]]:
        out = [
            p
            for p in s.pulls.values()
            if (state == "all" or (p["state"] == "open") == (state == "open"))
            and (not head or f"{s.owner}:{p['head']}" == head or p["head"] == head)
            and (not base or p["base"] == base)
        ]
        out.sort(key=lambda p: -p["number"])
        return [s.pull_json(p) for p in behaviour.page(request, response, out, per_page, page)]

    @app.post(R + "/pulls", status_code=201)
    async def create_pull(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        behaviour.check_text("PullRequest", body)
        head = body["head"].split(":")[-1]
        for name, role in ((head, "head"), (body["base"], "base")):
            if s.branch_sha(name) is None or (role == "head" and s.lag.missing(name)):
                raise ApiError(422, f"Validation Failed: {role} is invalid")
        if _is_ancestor(s, s.branch_sha(head) or "", s.branch_sha(body["base"]) or ""):
            raise ApiError(422, f"Validation Failed: No commits between {body['base']} and {head}")
        if any(p["head"] == head and p["state"] == "open" for p in s.pulls.values()):
            raise ApiError(
                422, f"Validation Failed: A pull request already exists for {s.owner}:{head}."
            )
        n = s.next_number()
        s.pulls[n] = {
            "number": n,
            "id": s.new_id(),
            "title": body["title"],
            "body": body.get("body") or "",
            "head": head,
            "base": body["base"],
            "state": "open",
            "labels": [],
            "user": "gitmedic[bot]",
            "head_sha": s.branch_sha(head),
        }
        return s.pull_json(s.pulls[n])

    @app.get(R + "/pulls/{number}")
    def get_pull(owner: str, repo: str, number: int) -> dict[str, Any]:
        return s.pull_json(_pull(s, number))

    @app.patch(R + "/pulls/{number}")
    async def edit_pull(owner: str, repo: str, number: int, request: Request) -> dict[str, Any]:
        pr, body = _pull(s, number), await request.json()
        behaviour.check_text("PullRequest", body)
        for key in ("title", "body"):
            if key in body:
                pr[key] = body[key]
        if body.get("state") in ("open", "closed") and pr["state"] != "merged":
            pr["state"] = body["state"]
        return s.pull_json(pr)

    @app.put(R + "/pulls/{number}/merge")
    async def merge_pull(owner: str, repo: str, number: int, request: Request) -> dict[str, Any]:
        pr = _pull(s, number)
        body = await request.json() if await request.body() else {}
        return _merge(
            s, pr, body.get("sha"), body.get("merge_method", "merge"), body.get("commit_title")
        )

    @app.get(R + "/pulls/{number}/merge")
    def is_merged(owner: str, repo: str, number: int) -> Response:
        if _pull(s, number)["state"] != "merged":
            raise ApiError(404, "Not Found")
        return Response(status_code=204)


def _pull(s: GitHubStore, number: int) -> dict[str, Any]:
    if number not in s.pulls:
        raise ApiError(404, "Not Found")
    return s.pulls[number]


def _merge(
    s: GitHubStore, pr: dict[str, Any], sha: str | None, method: str, title: str | None
) -> dict[str, Any]:
    with s.lock:
        if pr["state"] != "open":
            raise ApiError(405, "Pull Request is not mergeable")
        head = s.branch_sha(pr["head"])
        if head is None:
            raise ApiError(422, "Head branch was deleted")
        if sha and sha != head:
            raise ApiError(409, "Head branch was modified. Review and try the merge again.")
        base = s.branch_sha(pr["base"])
        assert base is not None
        message = title or f"Merge pull request #{pr['number']} from {s.owner}/{pr['head']}"
        merged = s.merge_commit(
            base, head, f"{message}\n\n{pr['title']}", squash=method == "squash"
        )
        s.git("update-ref", f"refs/heads/{pr['base']}", merged, base)
        pr.update(state="merged", merge_sha=merged, head_sha=head)
        return {"sha": merged, "merged": True, "message": "Pull Request successfully merged"}


def _issue_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get(R + "/issues")
    def list_issues(
        request: Request,
        response: Response,
        owner: str,
        repo: str,
        state: str = "open",
        labels: str = "",
        creator: str = "",
        per_page: int = behaviour.DEFAULT_PER_PAGE,
        page: int = 1,
    ) -> list[dict[str, Any]]:
        wanted = {x for x in labels.split(",") if x}
        records = [*s.issues.values(), *(_pull_as_issue(p) for p in s.pulls.values())]
        out = [
            i
            for i in records
            if (state == "all" or (i["state"] == "open") == (state == "open"))
            and wanted <= set(i["labels"])
            and (not creator or i["user"] == creator)
        ]
        out.sort(key=lambda i: -i["number"])
        return [s.issue_json(i) for i in behaviour.page(request, response, out, per_page, page)]

    @app.post(R + "/issues", status_code=201)
    async def create_issue(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        behaviour.check_text("Issue", body)
        if not body.get("title"):
            raise ApiError(422, "Validation Failed: title is missing")
        n = s.next_number()
        s.issues[n] = {
            "number": n,
            "id": s.new_id(),
            "title": body["title"],
            "body": body.get("body") or "",
            "state": "open",
            "labels": list(body.get("labels", [])),
            "user": "gitmedic[bot]",
        }
        return s.issue_json(s.issues[n])

    @app.get(R + "/issues/{number}")
    def get_issue(owner: str, repo: str, number: int) -> dict[str, Any]:
        return s.issue_json(_issue(s, number))

    @app.patch(R + "/issues/{number}")
    async def edit_issue(owner: str, repo: str, number: int, request: Request) -> dict[str, Any]:
        issue, body = _issue(s, number), await request.json()
        behaviour.check_text("Issue", body)
        target = s.pulls.get(number, issue)
        for key in ("title", "body"):
            if key in body:
                target[key] = body[key]
        if "labels" in body:
            target["labels"] = list(body["labels"])
        if body.get("state") in ("open", "closed") and target.get("state") != "merged":
            target["state"] = body["state"]
        return s.issue_json(_issue(s, number))

    @app.get(R + "/issues/{number}/comments")
    def list_comments(
        request: Request,
        response: Response,
        owner: str,
        repo: str,
        number: int,
        per_page: int = behaviour.DEFAULT_PER_PAGE,
        page: int = 1,
    ) -> list[dict[str, Any]]:
        _issue(s, number)
        out = [c for c in s.comments.values() if c["issue"] == number]
        return [s.comment_json(c) for c in behaviour.page(request, response, out, per_page, page)]

    @app.post(R + "/issues/{number}/comments", status_code=201)
    async def create_comment(
        owner: str, repo: str, number: int, request: Request
    ) -> dict[str, Any]:
        _issue(s, number)
        body = await request.json()
        behaviour.check_text("IssueComment", body)
        cid = s.new_id()
        s.comments[cid] = {
            "id": cid,
            "issue": number,
            "body": body["body"],
            "user": "gitmedic[bot]",
        }
        return s.comment_json(s.comments[cid])

    @app.patch(R + "/issues/comments/{cid}")
    async def edit_comment(owner: str, repo: str, cid: int, request: Request) -> dict[str, Any]:
        if cid not in s.comments:
            raise ApiError(404, "Not Found")
        body = await request.json()
        behaviour.check_text("IssueComment", body)
        s.comments[cid]["body"] = body["body"]
        return s.comment_json(s.comments[cid])

    @app.delete(R + "/issues/comments/{cid}", status_code=204)
    def delete_comment(owner: str, repo: str, cid: int) -> Response:
        if s.comments.pop(cid, None) is None:
            raise ApiError(404, "Not Found")
        return Response(status_code=204)

    @app.post(R + "/issues/{number}/labels")
    async def add_labels(
        owner: str, repo: str, number: int, request: Request
    ) -> list[dict[str, Any]]:
        target = s.pulls.get(number) or _issue(s, number)
        body = await request.json()
        names = body if isinstance(body, list) else body.get("labels", [])
        for name in names:
            if name not in target["labels"]:
                target["labels"].append(name)
            s.labels.add(name)
        return [s.label_json(n) for n in target["labels"]]

    @app.delete(R + "/issues/{number}/labels/{name}")
    def remove_label(owner: str, repo: str, number: int, name: str) -> list[dict[str, Any]]:
        target = s.pulls.get(number) or _issue(s, number)
        if name not in target["labels"]:
            raise ApiError(404, "Label does not exist")
        target["labels"].remove(name)
        return [s.label_json(n) for n in target["labels"]]


def _pull_as_issue(pr: dict[str, Any]) -> dict[str, Any]:
    return {**pr, "state": "open" if pr["state"] == "open" else "closed"}


def _issue(s: GitHubStore, number: int) -> dict[str, Any]:
    if number in s.pulls:
        return _pull_as_issue(s.pulls[number])
    if number not in s.issues:
        raise ApiError(404, "Not Found")
    return s.issues[number]


def _commit_or_422(s: GitHubStore, sha: str) -> str:
    try:
        return s.resolve(sha)
    except ApiError:
        raise ApiError(422, f"No commit found for SHA: {sha}") from None


def _status_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.post(R + "/statuses/{sha}", status_code=201)
    async def create_status(owner: str, repo: str, sha: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        if body.get("state") not in ("error", "failure", "pending", "success"):
            raise ApiError(422, "Validation Failed: state is not included in the list")
        record = {
            **TEMPLATES["status"],
            "target_url": None,  # GitHub stores an absent input as null
            "description": None,
            **body,
            "id": s.new_id(),
            "sha": _commit_or_422(s, sha),
            "created_at": NOW,
            "updated_at": NOW,
            "url": f"{s.repo_url}/statuses/{sha}",
        }
        s.statuses.append(record)
        return record

    @app.get(R + "/commits/{ref}/status")
    def combined(owner: str, repo: str, ref: str) -> dict[str, Any]:
        sha = s.resolve(ref)
        latest: dict[str, dict[str, Any]] = {}
        for st in s.statuses:
            if st["sha"] == sha:
                latest[st["context"]] = st
        states = {st["state"] for st in latest.values()}
        state = (
            "failure"
            if states & {"failure", "error"}
            else "pending"
            if "pending" in states or not states
            else "success"
        )
        return {
            "state": state,
            "sha": sha,
            "total_count": len(latest),
            "statuses": list(latest.values()),
            "repository": s.repo_json(),
            "commit_url": f"{s.repo_url}/commits/{sha}",
            "url": f"{s.repo_url}/commits/{sha}/status",
        }

    @app.get(R + "/commits/{ref}")
    def rest_commit(owner: str, repo: str, ref: str) -> dict[str, Any]:
        git = s.commit_json(s.resolve(ref))
        return {
            "sha": git["sha"],
            "node_id": git["node_id"],
            "url": f"{s.repo_url}/commits/{git['sha']}",
            "html_url": git["html_url"],
            "commit": {k: git[k] for k in ("author", "committer", "message", "tree", "url")},
            "parents": git["parents"],
            "files": [],
        }

    @app.get(R + "/commits/{ref}/statuses")
    def statuses(owner: str, repo: str, ref: str) -> list[dict[str, Any]]:
        sha = s.resolve(ref)
        return [st for st in reversed(s.statuses) if st["sha"] == sha]

    @app.post(R + "/check-runs", status_code=201)
    async def create_check(owner: str, repo: str, request: Request) -> dict[str, Any]:
        body = await request.json()
        cid = s.new_id()
        s.checks[cid] = {
            **TEMPLATES["check"],
            # without one, GitHub shows the App's homepage as the details URL
            "details_url": TEMPLATES["check"]["app"]["html_url"],
            "conclusion": None,
            **body,
            "id": cid,
            "node_id": f"CR_{cid}",
            "url": f"{s.repo_url}/check-runs/{cid}",
            "pull_requests": [],
        }
        s.checks[cid]["output"] = _check_output(s, cid, body.get("output") or {})
        return s.checks[cid]

    @app.patch(R + "/check-runs/{cid}")
    async def update_check(owner: str, repo: str, cid: int, request: Request) -> dict[str, Any]:
        if cid not in s.checks:
            raise ApiError(404, "Not Found")
        body = await request.json()
        output = {**s.checks[cid]["output"], **(body.get("output") or {})}
        s.checks[cid].update(body)
        s.checks[cid]["output"] = _check_output(s, cid, output)
        return s.checks[cid]

    @app.get(R + "/commits/{ref}/check-runs")
    def list_checks(
        request: Request,
        response: Response,
        owner: str,
        repo: str,
        ref: str,
        check_name: str = "",
        per_page: int = behaviour.DEFAULT_PER_PAGE,
        page: int = 1,
    ) -> dict[str, Any]:
        sha = s.resolve(ref)
        runs = [
            c
            for c in reversed(s.checks.values())
            if c.get("head_sha") == sha and (not check_name or c["name"] == check_name)
        ]
        shown = behaviour.page(request, response, runs, per_page, page)
        return {"total_count": len(runs), "check_runs": shown}


def _check_output(s: GitHubStore, cid: int, given: dict[str, Any]) -> dict[str, Any]:
    """A check run's output as GitHub answers it (what was not given is null)."""
    return {
        "title": given.get("title"),
        "summary": given.get("summary"),
        "text": given.get("text"),
        "annotations_count": len(given.get("annotations") or ()),
        "annotations_url": f"{s.repo_url}/check-runs/{cid}/annotations",
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(store: GitHubStore) -> Iterator[str]:
    """Run the stand-in on 127.0.0.1 in a thread; yields its base URL."""
    port = free_port()
    store.base_url = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(
        make_app(store), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the GitHub stand-in did not start")
        time.sleep(0.01)
    try:
        yield store.base_url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class SharedServer:
    """One uvicorn server per test process whose app is swapped per test (a fresh store).

    Starting uvicorn costs far more than building an app, so every test's store is
    served by this one server. Requests are handled one at a time: the stand-in's
    records are plain dicts, and GitHub itself answers each request atomically.
    """

    def __init__(self) -> None:
        self.app: FastAPI | None = None
        self._lock: asyncio.Lock | None = None
        # bound and listening before uvicorn starts: a client's connection waits in the
        # backlog until the server thread serves it, so nothing polls for the start
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        serving = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        serving.start()

    def use(self, store: GitHubStore) -> str:
        """Serve ``store`` from now on; its base URL."""
        store.base_url = self.base_url
        self.app = make_app(store)
        return self.base_url

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert self.app is not None, "SharedServer.use(store) first"
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self.app(scope, receive, send)


_SHARED: list[SharedServer] = []


def shared_server() -> SharedServer:
    if not _SHARED:
        _SHARED.append(SharedServer())
    return _SHARED[0]
