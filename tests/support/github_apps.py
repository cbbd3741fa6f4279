"""GitHub App authentication for the stand-in: installation lookup and token exchange.

As on GitHub: ``GET /repos/{owner}/{repo}/installation`` and ``POST
/app/installations/{id}/access_tokens`` take the App's RS256 JWT (``Authorization:
Bearer``, ``iss`` = the App id, verified with the App's public key); the token it
returns authenticates every other request (``Authorization: token``). While
``store.tokens`` is empty the stand-in accepts any caller, so tests that are not
about authentication need no credentials.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import jwt
from fastapi import FastAPI, Request

from tests.support.github_store import NOW, ApiError, GitHubStore


def check_credentials(store: GitHubStore, request: Request) -> str | None:
    """Why the request is refused (401), or ``None`` when it may proceed."""
    scheme, _, credential = request.headers.get("authorization", "").partition(" ")
    if _is_app_route(request.url.path):
        if store.app_id is None or scheme.lower() != "bearer":
            return "A JSON web token could not be decoded"
        return _jwt_problem(store, credential)
    if store.tokens and (
        scheme.lower() not in ("token", "bearer") or credential not in store.tokens
    ):
        return "Bad credentials"
    if store.minted.expired(credential):
        return "Bad credentials"  # what GitHub says for an expired installation token
    store.minted.use(credential)
    return None


def app_routes(app: FastAPI, s: GitHubStore) -> None:
    @app.get("/repos/{owner}/{repo}/installation")
    def installation(owner: str, repo: str) -> dict[str, Any]:
        if (owner, repo) != (s.owner, s.name):
            raise ApiError(404, "Not Found")
        return _installation(s)

    @app.post("/app/installations/{installation_id}/access_tokens", status_code=201)
    def access_token(installation_id: int) -> dict[str, Any]:
        if installation_id != s.installation_id:
            raise ApiError(404, "Not Found")
        token = "ghs_" + secrets.token_hex(18)
        s.tokens.add(token)
        expires = datetime.fromtimestamp(s.minted.mint(token), UTC)
        return {
            "token": token,
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "permissions": {"contents": "write", "pull_requests": "write", "issues": "write"},
            "repository_selection": "selected",
        }


def _is_app_route(path: str) -> bool:
    return path.startswith("/app/") or path.endswith("/installation")


def _jwt_problem(store: GitHubStore, token: str) -> str | None:
    assert store.app_public_key is not None
    try:
        claims = jwt.decode(
            token, store.app_public_key, algorithms=["RS256"], options={"verify_iat": False}
        )
    except jwt.PyJWTError as exc:
        return f"A JSON web token could not be decoded: {exc}"
    if str(claims.get("iss")) != str(store.app_id):
        return "'Issuer' claim ('iss') must be the App's id"
    return None


def _installation(s: GitHubStore) -> dict[str, Any]:
    base = s.base_url
    return {
        "id": s.installation_id,
        "app_id": s.app_id,
        "app_slug": "gitmedic",
        "target_id": 1,
        "target_type": "Organization",
        "account": s.user(s.owner),
        "access_tokens_url": f"{base}/app/installations/{s.installation_id}/access_tokens",
        "repositories_url": f"{base}/installation/repositories",
        "html_url": f"https://github.com/organizations/{s.owner}/settings/installations/{s.installation_id}",
        "permissions": {"contents": "write", "pull_requests": "write", "issues": "write"},
        "events": ["pull_request", "issue_comment", "check_run"],
        "repository_selection": "selected",
        "single_file_name": None,
        "suspended_by": None,
        "suspended_at": None,
        "created_at": NOW,
        "updated_at": NOW,
    }
