"""GitHubForge against GitHub's limits: 65,536-character texts, listings past one page.

Over real HTTP against the stand-in, which refuses a longer text with 422 and
serves listings a page at a time with ``Link`` headers, as GitHub does.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import requests

from gitmedic.bot.forges._github_fit import LIMIT, github_length, split
from gitmedic.bot.forges._retry import Failure
from gitmedic.bot.forges.github import GitHubForge
from gitmedic.bot.render.pr_body import checked_controls, render_pr_body
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.reconciler import forge_markers as markers
from gitmedic.reconciler.forge import PrFilter
from tests.bot.test_pr_body import playbook_body
from tests.forge.backends import BRANCH, FIX, STATE, GitHubBackend, open_fix
from tests.support.github_behaviour import BODY_LIMIT

_PART = re.compile(
    r"\A<!-- gitmedic:topic (\S+)/part-(\d+) -->\n_\(continued: part \d+ of \d+\)_\n\n"
)


@pytest.fixture
def gh(tmp_path: Path) -> GitHubBackend:
    return GitHubBackend(tmp_path)


def finding(n: int) -> Finding:
    return Finding(
        detector="service-target-port",
        rule="no-container-port",
        severity=Severity.CRITICAL,
        resource=Resource("Service", "shop", f"svc-{n:04d}"),
        summary=f"Service svc-{n:04d} targets port 8081, which no selected container exposes",
        evidence=f"spec.ports[0].targetPort: 8081 (finding {n:04d})",
    )


def big_body(findings: int) -> str:
    data = replace(playbook_body(), findings=tuple(finding(n) for n in range(findings)))
    return render_pr_body(data).text


def writes(gh: GitHubBackend) -> list[tuple[str, str]]:
    return [(m, p) for m, p in gh.store.requests if m in ("POST", "PATCH", "DELETE")]


def parts_of(gh: GitHubBackend, number: int, topic: str) -> list[str]:
    """The continuation comments' texts, in order, without their headers."""
    found = []
    for c in gh.store.comments.values():
        match = _PART.match(c["body"]) if c["issue"] == number else None
        if match and match.group(1) == topic:
            found.append((int(match.group(2)), c["body"][match.end() :]))
    return [text for _, text in sorted(found)]


def test_a_70000_character_finding_set_opens_a_pr_whose_body_fits(gh: GitHubBackend) -> None:
    body = big_body(420)
    assert len(body) > 70_000
    gh.push(BRANCH, FIX)
    pr = gh.forge.ensure_pr(BRANCH, "main", "Fix 420 services", body, ["gitmedic"], STATE)
    stored = gh.store.pulls[pr.number]["body"]
    assert github_length(stored) <= LIMIT
    assert pr.bot_state == markers.normalise_state(STATE)
    parts = parts_of(gh, pr.number, "description")
    assert len(parts) == 1
    first = next(c for c in gh.store.comments.values() if c["body"].startswith("<!-- gitmedic"))
    assert f"#issuecomment-{first['id']})" in stored  # the note links to the cut text
    # nothing is lost: the kept beginning, the parts, the kept end give every row back
    kept = markers.strip_markers(stored)
    for n in range(420):
        assert sum(f"svc-{n:04d}`" in text for text in (kept, *parts)) == 1, n
    # the controls people tick and the plan are at the end: kept in the body
    assert "## " in kept.split("Cut here")[1] and "gitmedic:control retry" in kept
    ticked = stored.replace("[ ] <!-- gitmedic:control hold", "[x] <!-- gitmedic:control hold")
    assert checked_controls(ticked) == {"hold"}


def test_a_cut_body_is_left_alone_when_unchanged_and_shrinks_back(gh: GitHubBackend) -> None:
    gh.push(BRANCH, FIX)
    body = big_body(420)
    pr = gh.forge.ensure_pr(BRANCH, "main", "Fix", body, (), STATE)
    before = len(writes(gh))
    assert gh.reopen().ensure_pr(BRANCH, "main", "Fix", body, (), STATE) == pr
    assert len(writes(gh)) == before  # idempotent: no write at all
    small = gh.forge.ensure_pr(BRANCH, "main", "Fix", "- [ ] hold\n", (), STATE)
    assert "Cut here" not in small.body
    assert parts_of(gh, pr.number, "description") == []  # the stale part is deleted


def test_a_long_comment_and_a_long_issue_fit_with_their_continuations(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    text = "\n".join(f"line {n:05d} " + "x" * 90 for n in range(1500))  # 150,000 characters
    comment = gh.forge.ensure_comment(number, "watch", text)
    assert github_length(comment.body) <= LIMIT
    parts = parts_of(gh, number, "watch")
    assert len(parts) == 2
    assert all(f"line {n:05d} " in comment.body + "".join(parts) for n in range(1500))
    assert gh.forge.ensure_comment(number, "watch", text).body == comment.body
    issue = gh.forge.ensure_issue("dashboard", text, (), {"kind": "dashboard"})
    assert github_length(gh.store.issues[issue.number]["body"]) <= LIMIT
    assert len(parts_of(gh, issue.number, "description")) == 2
    assert issue.bot_state == {"kind": "dashboard"}


def test_the_stand_in_refuses_a_text_over_the_limit_as_github_does(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    forge = GitHubForge(gh.store.full_name, token=gh.TOKEN, base_url=gh.url)
    comments = f"/issues/{number}/comments"
    assert forge.request("POST", comments, body={"body": "x" * BODY_LIMIT})["id"]
    refused = forge.attempt(
        lambda: forge.request("POST", comments, body={"body": "x" * (BODY_LIMIT + 1)})
    )
    assert isinstance(refused, Failure) and refused.status == 422
    assert "maximum is 65536 characters" in refused.message


def test_split_keeps_what_fits_whole() -> None:
    text = "short\n<!-- gitmedic:body-hash sha256:" + "0" * 64 + " -->"
    assert split(text).text(None) == text
    assert split("é" * LIMIT).rest == ()
    wide = "😀" * (LIMIT // 2 + 1)  # two UTF-16 units each: over the limit
    assert split(wide).rest != ()


# ----------------------------------------------------------------------------- pagination


def test_250_open_prs_are_paged(gh: GitHubBackend) -> None:
    for n in range(250):
        gh.store.pulls[n + 1] = {
            "number": n + 1,
            "id": gh.store.new_id(),
            "title": f"PR {n + 1}",
            "body": "",
            "head": f"feature/{n + 1}",
            "base": "main",
            "state": "open",
            "labels": [],
            "user": "alice",
            "head_sha": gh.store.branch_sha("main"),
        }
    prs = gh.forge.list_prs(PrFilter.OPEN)
    assert [pr.number for pr in prs] == list(range(1, 251))
    pages = [p for m, p in gh.store.requests if m == "GET" and p.endswith("/pulls")]
    assert len(pages) == 3  # 100 + 100 + 50, following Link: rel="next"


def test_the_stand_in_pages_at_githubs_sizes(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    for n in range(65):
        gh.comment_as("alice", number, f"comment {n}")
    url = f"{gh.url}/repos/{gh.store.full_name}/issues/{number}/comments"
    first = requests.get(url, timeout=10)
    assert len(first.json()) == 30  # GitHub's default page size
    assert 'rel="next"' in first.headers["Link"] and 'rel="prev"' not in first.headers["Link"]
    big = requests.get(url, params={"per_page": 500}, timeout=10)
    assert len(big.json()) == 65 and "Link" not in big.headers  # at most 100 a page
    last = requests.get(url, params={"page": 3}, timeout=10)
    assert len(last.json()) == 5 and 'rel="next"' not in last.headers["Link"]
