"""GitHubForge's git data verbs: ``commit_files`` and the revert fallback.

Both work on whole trees (``GET /git/trees/<sha>?recursive=1``) and write with the
git data API: a tree on top of a base tree (changed entries only: blob ids are
computed locally, so unchanged files cost nothing), a commit, then the ref.

The revert is what ``git revert -m 1 M`` computes, decided per file: for every path
that merge M changed relative to its first parent P, the base's current version B
must still be M's (it then goes back to P's), or already be P's (nothing to do);
anything else is a conflict. That is coarser than git's line-level merge, so the
GraphQL ``revertPullRequest`` (GitHub's own merge) is tried first and this plan is
written only when GraphQL is unavailable; the plan is computed before either, so
"nothing to revert" is decided the same way on both paths.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.bot.forges._github_api import (
    ApiUser,
    blob_sha,
    quote,
    quote_all,
    raise_failure,
    verb,
)
from gitmedic.bot.forges._retry import Failure, Lagging
from gitmedic.reconciler.forge import (
    BOT_EMAIL,
    BOT_LOGIN,
    Conflict,
    ForgeError,
    PullRequest,
    Validation,
    check_file_paths,
    revert_branch_name,
)

Entry = tuple[str, str]  # (mode, object sha)
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^[-/.]|[/.]$|\.lock$|/\.")
AUTHOR = {"name": BOT_LOGIN, "email": BOT_EMAIL}
_REF_LAG = re.compile(r"reference (already exists|does not exist)", re.IGNORECASE)


@dataclass(frozen=True)
class RevertPlan:
    base_sha: str
    base_tree: str
    changes: Mapping[str, Entry | None]  # path -> its first-parent entry; None: delete
    conflicts: tuple[str, ...]


class GitData(ApiUser):
    @verb
    def commit_files(
        self, branch: str, base_sha: str, files: Mapping[str, str | None], message: str
    ) -> str:
        if _BAD_REF.search(branch) or not branch:
            raise Validation(f"{branch!r} is not a valid branch name")
        if branch == self.default_branch():
            raise Validation(f"{branch} is the default branch; the bot commits only to PR branches")
        check_file_paths(files)
        base = self.get_or_none(f"/git/commits/{quote_all(base_sha)}") if base_sha else None
        if base is None:
            raise Validation(f"no commit found for base sha {base_sha!r}")
        head = self.ref_sha(branch)
        descends = head is not None and (head == base["sha"] or self.is_ancestor(base["sha"], head))
        parent = self.commit(head) if descends and head is not None else base
        entries = _tree_edits(self.files(parent["tree"]["sha"]), files)
        if not entries:
            if head is not None and parent["sha"] == head != base["sha"]:
                return head  # already committed by an earlier call
            raise Validation(f"these files change nothing on {base['sha'][:12]}: nothing to commit")
        tree = self.request(
            "POST", "/git/trees", body={"base_tree": parent["tree"]["sha"], "tree": entries}
        )
        sha = self._commit_tree(message, tree["sha"], parent["sha"])
        self._move_branch(branch, sha, head, fast_forward=parent["sha"] == head)
        return sha

    # ------------------------------------------------------------------ reading

    def ref_sha(self, branch: str) -> str | None:
        ref = self.get_or_none(f"/git/ref/heads/{quote(branch)}")
        return None if ref is None else str(ref["object"]["sha"])

    def commit(self, sha: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/git/commits/{sha}"))

    def files(self, tree_sha: str) -> dict[str, Entry]:
        tree = self.request("GET", f"/git/trees/{tree_sha}", {"recursive": "1"})
        if tree.get("truncated"):
            raise ForgeError(f"tree {tree_sha[:12]} is too large for GitHub to list in one request")
        return {e["path"]: (e["mode"], e["sha"]) for e in tree["tree"] if e["type"] != "tree"}

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        compare = self.get_or_none(f"/compare/{ancestor}...{descendant}")
        return compare is not None and compare["status"] in ("ahead", "identical")

    def changed_on_both_sides(self, base: str, head_sha: str) -> tuple[str, ...]:
        """Files a PR and its base both changed since they parted (where merges conflict)."""
        ours = self.get_or_none(f"/compare/{quote(base)}...{head_sha}")
        if ours is None:
            return ()
        fork = ours["merge_base_commit"]["sha"]
        theirs = self.get_or_none(f"/compare/{fork}...{quote(base)}") or {"files": []}
        both = {f["filename"] for f in ours["files"]} & {f["filename"] for f in theirs["files"]}
        return tuple(sorted(both))

    # ------------------------------------------------------------------ revert

    def plan_revert(self, pr: PullRequest) -> RevertPlan:
        assert pr.merge_sha is not None
        base_sha = self.ref_sha(pr.base)
        if base_sha is None:
            raise Validation(f"base branch {pr.base} of PR #{pr.number} does not exist")
        if not self.is_ancestor(pr.merge_sha, base_sha):
            raise Conflict(f"PR #{pr.number}'s merge {pr.merge_sha[:12]} is no longer on {pr.base}")
        merge = self.commit(pr.merge_sha)
        merged = self.files(merge["tree"]["sha"])
        before = self.files(self.commit(merge["parents"][0]["sha"])["tree"]["sha"])
        base_tree = self.commit(base_sha)["tree"]["sha"]
        now = self.files(base_tree)
        changes: dict[str, Entry | None] = {}
        conflicts = []
        for path in sorted(set(merged) | set(before)):
            want, was, current = before.get(path), merged.get(path), now.get(path)
            if want == was or current == want:
                continue
            if current == was:
                changes[path] = want
            else:
                conflicts.append(path)
        if not changes and not conflicts:
            raise Validation(
                f"PR #{pr.number}'s changes are no longer on {pr.base}: nothing to revert"
            )
        return RevertPlan(base_sha, base_tree, changes, tuple(conflicts))

    def write_revert(self, pr: PullRequest, plan: RevertPlan) -> int:
        """Write the planned revert commit on the revert branch, open its PR; the number."""
        assert pr.merge_sha is not None
        entries = [_entry(path, entry) for path, entry in plan.changes.items()]
        tree = self.request(
            "POST", "/git/trees", body={"base_tree": plan.base_tree, "tree": entries}
        )
        message = f'Revert "{pr.title}"\n\nThis reverts commit {pr.merge_sha}.'
        sha = self._commit_tree(message, tree["sha"], plan.base_sha)
        branch = revert_branch_name(pr)
        self._move_branch(branch, sha, self.ref_sha(branch), fast_forward=False)
        payload = {"head": branch, "base": pr.base, "title": f'Revert "{pr.title}"', "body": ""}
        created = self.attempt(lambda: self.request("POST", "/pulls", body=payload))
        if isinstance(created, Failure):
            self.request("DELETE", f"/git/refs/heads/{quote(branch)}")  # leave nothing behind
            raise_failure(created, f"opening the revert PR of #{pr.number}")
        return int(created["number"])

    # ------------------------------------------------------------------ writing

    def _commit_tree(self, message: str, tree: str, parent: str) -> str:
        body = {"message": message, "tree": tree, "parents": [parent], "author": AUTHOR}
        return str(self.request("POST", "/git/commits", body=body)["sha"])

    def _move_branch(self, branch: str, sha: str, head: str | None, fast_forward: bool) -> None:
        if head is None:
            call = lambda: self.request(  # noqa: E731
                "POST", "/git/refs", body={"ref": f"refs/heads/{branch}", "sha": sha}
            )
        else:
            patch = {"sha": sha, "force": not fast_forward}
            call = lambda: self.request("PATCH", f"/git/refs/heads/{quote(branch)}", body=patch)  # noqa: E731
        result = self.attempt(call)
        if isinstance(result, Failure):
            if result.status == 422 and _REF_LAG.search(result.message):
                # created a moment ago ("already exists" though we read it missing) or
                # not visible yet ("does not exist" though we read it): retried
                raise Lagging(f"branch {branch} is not yet consistent on GitHub: {result.message}")
            if result.status == 422:
                raise Conflict(f"branch {branch} moved while gitmedic was writing it; try again")
            raise_failure(result, f"moving branch {branch}")


def _tree_edits(current: Mapping[str, Entry], files: Mapping[str, str | None]) -> list[Any]:
    """Tree entries for the files that differ from ``current`` (deleting absent ones: none)."""
    edits: list[Any] = []
    for path, text in files.items():
        entry = current.get(path)
        if text is None:
            if entry is not None:
                edits.append({"path": path, "mode": entry[0], "type": "blob", "sha": None})
        elif entry is None or entry[1] != blob_sha(text):
            mode = entry[0] if entry is not None else "100644"
            edits.append({"path": path, "mode": mode, "type": "blob", "content": text})
    return edits


def _entry(path: str, entry: Entry | None) -> dict[str, Any]:
    if entry is None:
        return {"path": path, "mode": "100644", "type": "blob", "sha": None}
    kind = "commit" if entry[0] == "160000" else "blob"
    return {"path": path, "mode": entry[0], "type": kind, "sha": entry[1]}
