"""GitHubForge: the Forge verbs over GitHub's REST and GraphQL APIs, through PyGithub.

PyGithub supplies authentication (a token, or a GitHub App whose installation
token it mints and refreshes from the App's JWT), base URLs (github.com, GitHub
Enterprise Server, our test stand-in), the HTTP requester and GraphQL. The verbs
send their requests through PyGithub's ``Requester`` and read the JSON GitHub
returns, rather than PyGithub's lazily loaded objects: each request then happens
exactly where the code says, which is what exact error mapping and whole-verb
retries need. PyGithub is imported by this module only; nothing else in gitmedic
sees its types, and no PyGithub exception reaches a caller.

Failures follow :mod:`._retry`: rate limits wait (within a bound, a wait of 0 s
included), 5xx retry with backoff and a ref GitHub has not caught up with yet
retries briefly, all by re-running the whole (idempotent) verb, through the
injected ``sleep`` and ``clock``; PyGithub's own retries and pauses are switched
off. An App's installation token refused with 401 (it expired earlier than
PyGithub's clock thought) is renewed once per verb before the verb is retried.
The token is registered with :data:`~gitmedic.reconciler.redact.REGISTRY`, and
every message is redacted, so it never shows in an error or a log. Texts over
GitHub's 65,536 characters are cut, their rest in comments (:mod:`._github_fit`).

Beyond the protocol: :meth:`GitHubForge.enable_auto_merge` turns on GitHub's
native auto-merge for a PR (``enablePullRequestAutoMerge``), and ``checks=True``
makes ``set_status`` write check runs (GitHub App auth only) instead of commit
statuses. Git data (``commit_files``, the revert fallback) is in :mod:`._github_git`;
comments, statuses, labels, issues and permissions in :mod:`._github_items`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubIntegration

from gitmedic.bot.forges._github_items import GitHubItems
from gitmedic.bot.forges._github_pulls import PullVerbs
from gitmedic.bot.forges._retry import Failure, Lagging, RetryPolicy, is_transient
from gitmedic.reconciler.forge import BOT_LOGIN, MergeMethod, PullRequest, Validation
from gitmedic.reconciler.outbound import scrubbed_forge
from gitmedic.reconciler.redact import REGISTRY, RedactingFilter

DEFAULT_BASE_URL = "https://api.github.com"
T = TypeVar("T")
_NEXT_LINK = re.compile(r'<([^>]+)>;\s*rel="next"')
_AUTO_MERGE = (
    "mutation($input: EnablePullRequestAutoMergeInput!) {"
    " enablePullRequestAutoMerge(input: $input) { pullRequest { number autoMergeRequest"
    " { mergeMethod } } } }"
)


@scrubbed_forge  # every writing verb redacts its text first
class GitHubForge(PullVerbs, GitHubItems):
    """The Forge verbs for one GitHub repository (``owner/name``)."""

    def __init__(
        self,
        repository: str,
        *,
        token: str | None = None,
        app_id: int | str | None = None,
        private_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        bot: str = BOT_LOGIN,
        checks: bool = False,
        graphql_revert: bool = True,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout: int = 30,
    ) -> None:
        """Authenticate with ``token``, or as the GitHub App ``app_id`` (``private_key``).

        ``bot`` is the login the forge's writes appear under (the App's
        ``<slug>[bot]``, or the token's user): it tells the bot's PRs, comments and
        issues from people's. App auth asks GitHub for the repository's
        installation here (so a missing installation fails now, as NotFound).
        """
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise Validation(f"repository must be 'owner/name', not {repository!r}")
        self.owner, self.name, self.bot, self.checks = owner, name, bot, checks
        self.graphql_revert = graphql_revert
        self.policy, self._sleep, self._clock = policy or RetryPolicy(), sleep, clock
        self._local = threading.local()
        self._kwargs: dict[str, Any] = {
            "base_url": base_url.rstrip("/"),
            "timeout": timeout,
            "retry": None,
            "seconds_between_requests": 0,
            "seconds_between_writes": 0,
            "per_page": 100,
        }
        _redact_pygithub_logs()
        self._app: tuple[Auth.AppAuth, int] | None = None
        self._auth = self.run_verb(lambda: _authenticate(self, token, app_id, private_key))
        self._gh = Github(auth=self._auth, **self._kwargs)
        self.repo_path = f"/repos/{urllib.parse.quote(owner)}/{urllib.parse.quote(name)}"
        self._repo_data: dict[str, Any] | None = None
        # After a write that made commits on GitHub (a PR's branch, a merge, a revert):
        # gitmedic's clone fetches them, so the gate and the loop can read them by SHA.
        self.fetched: Callable[[], object] = lambda: None

    def git_token(self) -> str:
        """The token git uses to fetch the repository (an App's installation token, renewed)."""
        token: str = self._auth.token
        return token

    # ------------------------------------------------------------------ requests

    def run_verb(self, call: Callable[[], T]) -> T:
        """Run one verb with the retry policy; nested verbs run inside the outer one's."""
        if getattr(self._local, "active", False):
            return call()
        self._local.active = True
        try:
            return self._with_retries(call)
        finally:
            self._local.active = False

    def _with_retries(self, call: Callable[[], T]) -> T:
        waited, counts, refreshed = 0.0, {"server": 0, "rate": 0, "lag": 0}, False
        while True:
            failure = None
            try:
                if hasattr(self, "_auth"):
                    REGISTRY.add(self._auth.token)
                return call()
            except (GithubException, requests.RequestException) as exc:
                failure = failure_of(exc)
            except Lagging as exc:
                failure = Failure(None, str(exc), lagging=True)
            # (outside the except block: the typed error carries no PyGithub context)
            if failure.status == 401 and not refreshed and self._refresh_token():
                refreshed = True  # an installation token that expired early: once per verb
                continue
            wait = self.policy.next_wait(
                failure,
                self._clock(),
                waited,
                counts["server"],
                rate_failures=counts["rate"],
                lag_failures=counts["lag"],
            )
            counts[_kind(failure)] += 1
            logging.getLogger(__name__).info("GitHub: %s; retrying in %.1f s", failure, wait)
            self._sleep(wait)
            waited += wait

    def _refresh_token(self) -> bool:
        """Mint a new installation token (App auth only); whether there is one to try."""
        if self._app is None:
            return False
        app, installation_id = self._app
        self._auth = app.get_installation_auth(installation_id)
        self._gh = Github(auth=self._auth, **self._kwargs)
        logging.getLogger(__name__).info("GitHub: the installation token was refused; renewed")
        return True

    def request(
        self,
        verb: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        """The JSON of one REST request; ``path`` is relative to the repository."""
        url = path if path.startswith(("http://", "https://")) else self.repo_path + path
        _, data = self._gh.requester.requestJsonAndCheck(
            verb, url, parameters=dict(params) if params else None, input=body
        )
        return data

    def pages(self, path: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a paginated listing, following GitHub's ``Link: rel="next"``."""
        items: list[Any] = []
        url: str | None = self.repo_path + path
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        while url is not None:
            headers, data = self._gh.requester.requestJsonAndCheck("GET", url, parameters=query)
            items.extend(data["check_runs"] if isinstance(data, dict) else data)
            match = _NEXT_LINK.search(headers.get("link", ""))
            url, query = (match.group(1), None) if match else (None, None)
        return items

    def attempt(self, call: Callable[[], T]) -> T | Failure:
        """``call``'s result, or the Failure of a request GitHub refused for good.

        Rate limits and server errors still propagate, to be retried by the verb.
        """
        try:
            return call()
        except (GithubException, requests.RequestException) as exc:
            failure = failure_of(exc)
            if is_transient(failure) or failure.status == 401:
                raise  # retried by the verb (a 401 renews an App's token first)
            if self.policy.rate_limit_wait(failure, self._clock()) is not None:
                raise  # even a wait of 0 s: GitHub asked us to try again
            return failure

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        _, data = self._gh.requester.graphql_query(query, dict(variables))
        result: dict[str, Any] = data.get("data") or {}
        return result

    # ------------------------------------------------------------------ repository

    def repository(self) -> dict[str, Any]:
        if self._repo_data is None:
            self._repo_data = self.run_verb(lambda: self.request("GET", ""))
        return self._repo_data

    def default_branch(self) -> str:
        return str(self.repository()["default_branch"])

    # ----------------------------------------------- writes that make commits: fetched

    def commit_files(
        self, branch: str, base_sha: str, files: Mapping[str, str | None], message: str
    ) -> str:
        head = super().commit_files(branch, base_sha, files, message)
        self.fetched()
        return head

    def merge(
        self, number: int, expected_head_sha: str, method: MergeMethod = MergeMethod.MERGE
    ) -> str:
        sha = super().merge(number, expected_head_sha, method)
        self.fetched()
        return sha

    def revert_pr(self, number: int) -> PullRequest:
        pr = super().revert_pr(number)
        self.fetched()
        return pr

    def enable_auto_merge(self, number: int, method: MergeMethod = MergeMethod.MERGE) -> bool:
        """Turn on GitHub's native auto-merge for open PR ``number`` (idempotent).

        GitHub then merges the PR with ``method`` once its required reviews and
        checks pass. ``False`` (and nothing changed) when the repository does not
        allow auto-merge; Validation when the PR is not open; GitHub's refusals
        map as for every verb.
        """
        return self.run_verb(lambda: self._enable_auto_merge(number, method))

    def _enable_auto_merge(self, number: int, method: MergeMethod) -> bool:
        if not self.repository().get("allow_auto_merge"):
            return False
        raw = self.raw_pull(number)
        if raw["state"] != "open":
            raise Validation(f"PR #{number} is {raw['state']}; auto-merge needs an open PR")
        wanted = method.value.upper()
        if (raw.get("auto_merge") or {}).get("merge_method", "").upper() == wanted:
            return True
        variables = {"input": {"pullRequestId": raw["node_id"], "mergeMethod": wanted}}
        self.graphql(_AUTO_MERGE, variables)
        return True


def failure_of(exc: Exception) -> Failure:
    """What a PyGithub or requests exception says about the failed request."""
    if isinstance(exc, GithubException):
        data = exc.data
        message = data.get("message") if isinstance(data, dict) else None
        errors = data.get("errors") if isinstance(data, dict) else None
        if errors and isinstance(errors, list):
            details = "; ".join(str(e.get("message", e)) for e in errors if isinstance(e, dict))
            message = f"{message}: {details}" if message and details else message or details
        return Failure(exc.status, str(message or exc.message or "error"), dict(exc.headers or {}))
    return Failure(None, f"{type(exc).__name__}: {exc}")


def _kind(failure: Failure) -> str:
    """Which retry budget a failure counts against."""
    if failure.lagging:
        return "lag"
    return "server" if is_transient(failure) else "rate"


def _authenticate(
    forge: GitHubForge, token: str | None, app_id: int | str | None, private_key: str | None
) -> Auth.Auth:
    if token is not None and app_id is None:
        REGISTRY.add(token)
        return Auth.Token(token)
    if token is None and app_id is not None and private_key is not None:
        REGISTRY.add(private_key)
        app = Auth.AppAuth(app_id, private_key)
        integration = GithubIntegration(auth=app, **forge._kwargs)
        installation = integration.get_repo_installation(forge.owner, forge.name)
        forge._app = (app, installation.id)
        return app.get_installation_auth(installation.id)
    raise Validation("GitHubForge needs either token= or both app_id= and private_key=")


def _redact_pygithub_logs() -> None:
    # Logger filters are not inherited: filter the loggers PyGithub writes to.
    for name in ("github", "github.Requester", "github.GithubRetry", __name__):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
