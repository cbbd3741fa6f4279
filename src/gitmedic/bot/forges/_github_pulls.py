"""GitHubForge's pull-request verbs: ensure, list, close, merge, revert, delete branch.

GitHub allows several PRs per head branch over time; the contract allows one, so
the PR of a branch is its open PR, else its newest one (found by ``GET /pulls``
with ``head=owner:branch``). A refused ``POST /pulls`` is explained afterwards
(which branch is missing, or that there is nothing to merge) rather than checked
beforehand, so the usual case costs one request; a 422 because a concurrent call
just opened the PR is resolved by finding that PR.

``revert_pr`` first computes the revert with the git data API (see
:mod:`._github_git`): that decides "nothing to revert" the same way whichever path
writes it. Then GitHub's own GraphQL ``revertPullRequest`` writes it (GitHub merges
line by line); when GraphQL is unavailable or refuses, the planned commit is written
with the git data API, or Conflict is raised when the plan has conflicting files.
Either way the revert PR then gets the bot's hidden state marker.

A head branch pushed a moment ago can look missing to GitHub's replicas: the
refused ``POST /pulls`` then raises :class:`~._retry.Lagging` and the verb is
retried after a short wait, before "push it first" is believed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gitmedic.bot.forges._github_api import labels_of, quote, raise_failure, verb
from gitmedic.bot.forges._github_fit import BODY_TOPIC, Fitting, split, unlinked
from gitmedic.bot.forges._github_git import GitData
from gitmedic.bot.forges._items import check_labels
from gitmedic.bot.forges._retry import Failure, Lagging, describe, typed_error
from gitmedic.reconciler import forge_markers as markers
from gitmedic.reconciler.forge import (
    Conflict,
    HeadMoved,
    MergeMethod,
    MergeNotAllowed,
    NotFound,
    NotMergeable,
    PrFilter,
    PrState,
    PullRequest,
    Validation,
    revert_branch_name,
)

_REVERT = (
    "mutation($input: RevertPullRequestInput!) {"
    " revertPullRequest(input: $input) { revertPullRequest { number headRefName } } }"
)


class PullVerbs(GitData, Fitting):
    @verb
    def ensure_pr(
        self,
        branch: str,
        base: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        state: Mapping[str, object] | None = None,
    ) -> PullRequest:
        wanted = check_labels(labels)
        rendered = markers.render_body(body, state)
        raw = self._raw_of_branch(branch)
        if raw is None:  # (too long: cut now, its parts posted once the PR has a number)
            raw = self._create_pull(branch, base, title, split(rendered).text(None))
        pr = self.pull(raw)
        if pr.state is not PrState.OPEN or pr.author != self.bot:
            return pr
        edits: dict[str, str] = {}
        if base != pr.base:
            self._check_branch(base, "base")
            edits["base"] = base
        if title != pr.title:
            edits["title"] = title
        if markers.needs_body_update(pr.body, body, state) or unlinked(pr.body):
            edits["body"] = self.fitted(pr.number, rendered, BODY_TOPIC, pr.body)
        if edits:
            raw = self.request("PATCH", f"/pulls/{pr.number}", body=edits)
        missing = [label for label in wanted if label not in pr.labels]
        if missing:
            self.post_labels(pr.number, missing)
        return self.get_pr(pr.number) if missing else self.pull(raw)

    @verb
    def get_pr(self, number: int) -> PullRequest:
        return self.pull(self.raw_pull(number))

    @verb
    def find_pr(self, branch: str) -> PullRequest | None:
        raw = self._raw_of_branch(branch)
        return None if raw is None else self.pull(raw)

    @verb
    def list_prs(self, which: PrFilter = PrFilter.OPEN) -> tuple[PullRequest, ...]:
        raws = self.pages("/pulls", {"state": which.value, "direction": "asc"})
        return tuple(sorted((self.pull(raw) for raw in raws), key=lambda pr: pr.number))

    @verb
    def find_prs(
        self, match: Mapping[str, object], which: PrFilter = PrFilter.ALL
    ) -> tuple[PullRequest, ...]:
        wanted = markers.normalise_state(match).items()
        return tuple(
            pr
            for pr in self.list_prs(which)
            if pr.bot_state is not None and wanted <= pr.bot_state.items()
        )

    @verb
    def close_pr(self, number: int) -> PullRequest:
        pr = self.pull(self.raw_pull(number))
        if pr.state is PrState.MERGED:
            raise Validation(f"PR #{number} is merged; a merged PR cannot be closed")
        if pr.state is PrState.CLOSED:
            return pr
        return self.pull(self.request("PATCH", f"/pulls/{number}", body={"state": "closed"}))

    @verb
    def merge(
        self, number: int, expected_head_sha: str, method: MergeMethod = MergeMethod.MERGE
    ) -> str:
        pr = self.pull(self.raw_pull(number))
        if pr.state is PrState.MERGED and pr.head_sha == expected_head_sha:
            assert pr.merge_sha is not None
            return pr.merge_sha  # merged by an earlier call: say so again
        if pr.state is not PrState.OPEN:
            raise NotMergeable(f"PR #{number} is {pr.state.value}; only open PRs merge")
        if pr.head_sha != expected_head_sha:
            raise _head_moved(pr, expected_head_sha)
        body = {"sha": expected_head_sha, "merge_method": method.value}
        result = self.attempt(lambda: self.request("PUT", f"/pulls/{number}/merge", body=body))
        if isinstance(result, Failure):
            if result.status == 409:
                raise _head_moved(self.get_pr(number), expected_head_sha)
            if result.status == 405:
                error = typed_error(result, f"merging PR #{number}")
                if isinstance(error, MergeNotAllowed):
                    raise error  # the repository's settings: no wait or rebase helps
                raise NotMergeable(self._why_not_mergeable(pr, result))
            raise_failure(result, f"merging PR #{number}")
        return str(result["sha"])

    @verb
    def revert_pr(self, number: int) -> PullRequest:
        pr = self.get_pr(number)
        if pr.state is not PrState.MERGED:
            raise Validation(f"PR #{number} is {pr.state.value}; only merged PRs revert")
        raw = self._raw_of_branch(revert_branch_name(pr))
        if raw is None:
            plan = self.plan_revert(pr)  # Validation when there is nothing to revert
            created = self._revert_by_graphql(pr) if self.graphql_revert else None
            if created is None:
                if plan.conflicts:
                    raise Conflict(
                        f"reverting PR #{number} conflicts with later changes on {pr.base} "
                        f"in: {', '.join(plan.conflicts)}"
                    )
                created = self.write_revert(pr, plan)
            raw = self.raw_pull(created)
        return self._mark_revert(raw, pr)

    @verb
    def delete_branch(self, branch: str) -> None:
        if branch == self.default_branch():
            raise Validation(f"{branch} is the default branch; it is never deleted")
        result = self.attempt(lambda: self.request("DELETE", f"/git/refs/heads/{quote(branch)}"))
        if isinstance(result, Failure) and result.status not in (404, 422):
            raise_failure(result, f"deleting branch {branch}")  # 404/422: already gone

    # ------------------------------------------------------------------ helpers

    def pull(self, raw: Mapping[str, Any]) -> PullRequest:
        merged = bool(raw.get("merged")) or raw.get("merged_at") is not None
        state = PrState.MERGED if merged else PrState(raw["state"])
        author, body = str(raw["user"]["login"]), str(raw.get("body") or "")
        return PullRequest(
            number=int(raw["number"]),
            branch=str(raw["head"]["ref"]),
            base=str(raw["base"]["ref"]),
            title=str(raw["title"]),
            body=body,
            state=state,
            head_sha=str(raw["head"]["sha"]),
            merge_sha=str(raw["merge_commit_sha"]) if merged else None,
            labels=labels_of(raw),
            author=author,
            url=str(raw["html_url"]),
            bot_state=markers.extract_state(body) if author == self.bot else None,
        )

    def raw_pull(self, number: int) -> dict[str, Any]:
        raw = self.get_or_none(f"/pulls/{number}")
        if raw is None:
            raise NotFound(f"pull request #{number} does not exist")
        return dict(raw)

    def _raw_of_branch(self, branch: str) -> dict[str, Any] | None:
        raws = self.pages("/pulls", {"state": "all", "head": f"{self.owner}:{branch}"})
        raws = [raw for raw in raws if raw["head"]["ref"] == branch]
        raws.sort(key=lambda raw: (raw["state"] == "open", raw["number"]))
        return dict(raws[-1]) if raws else None

    def _create_pull(self, branch: str, base: str, title: str, body: str) -> dict[str, Any]:
        payload = {"head": branch, "base": base, "title": title, "body": body}
        result = self.attempt(lambda: self.request("POST", "/pulls", body=payload))
        if not isinstance(result, Failure):
            return dict(result)
        if result.status == 422:
            raced = self._raw_of_branch(branch)  # a concurrent call opened it meanwhile
            if raced is not None:
                return raced
            self._check_branch(branch, "head")
            self._check_branch(base, "base")
            self._check_ahead(branch, base)
        raise_failure(result, f"opening a PR for {branch}")

    def _check_branch(self, branch: str, role: str) -> None:
        if self.get_or_none(f"/git/ref/heads/{quote(branch)}") is None:
            if role == "head":  # pushed a moment ago, GitHub may not see it yet: retried
                raise Lagging(f"head branch {branch} does not exist; push it first")
            raise Validation(f"{role} branch {branch} does not exist")

    def _check_ahead(self, branch: str, base: str) -> None:
        compare = self.get_or_none(f"/compare/{quote(base)}...{quote(branch)}")
        if compare is not None and int(compare["ahead_by"]) == 0:
            raise Validation(f"no commits between {base} and {branch}")

    def _why_not_mergeable(self, pr: PullRequest, failure: Failure) -> str:
        both = self.changed_on_both_sides(pr.base, pr.head_sha)
        where = f"; changed on both sides: {', '.join(both)}" if both else ""
        return f"PR #{pr.number} cannot be merged into {pr.base} ({describe(failure)}){where}"

    def _revert_by_graphql(self, pr: PullRequest) -> int | None:
        """The number of the revert PR GitHub made; ``None`` when GraphQL can't or won't."""
        raw = self.raw_pull(pr.number)
        body, title = _revert_body(pr), f'Revert "{pr.title}"'
        variables = {"input": {"pullRequestId": raw["node_id"], "title": title, "body": body}}
        result = self.attempt(lambda: self.graphql(_REVERT, variables))
        if isinstance(result, Failure):
            return None
        made = (result.get("revertPullRequest") or {}).get("revertPullRequest") or {}
        return int(made["number"]) if made.get("number") else None

    def _mark_revert(self, raw: dict[str, Any], pr: PullRequest) -> PullRequest:
        revert = self.pull(raw)
        state = {"reverts": pr.number, "merge_sha": pr.merge_sha}
        if revert.author == self.bot and markers.needs_body_update(
            revert.body, f"Reverts #{pr.number}.", state
        ):
            edited = {"body": _revert_body(pr)}
            revert = self.pull(self.request("PATCH", f"/pulls/{revert.number}", body=edited))
        return revert


def _head_moved(pr: PullRequest, expected: str) -> HeadMoved:
    return HeadMoved(
        f"PR #{pr.number}'s head is {pr.head_sha[:12]}, not the expected "
        f"{expected[:12]}: re-check it before merging"
    )


def _revert_body(pr: PullRequest) -> str:
    state = {"reverts": pr.number, "merge_sha": pr.merge_sha}
    return markers.render_body(f"Reverts #{pr.number}.", state)
