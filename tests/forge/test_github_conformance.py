"""The stand-in is held to GitHub's OpenAPI description, both ways, and a drift fails.

Every other test that uses the stand-in is checked by the autouse fixture of
:mod:`tests.support.github_conformance`; these prove the check can fail: a
malformed reply, a request GitHub would refuse, and the fixture failing the test.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from gitmedic.bot.forges.github import GitHubForge
from tests.forge.backends import GitHubBackend, open_fix
from tests.support.github_openapi import converted, rest_description


@pytest.fixture
def gh(tmp_path: Path) -> GitHubBackend:
    return GitHubBackend(tmp_path)


def forge_of(gh: GitHubBackend) -> GitHubForge:
    return GitHubForge(gh.store.full_name, token=gh.TOKEN, base_url=gh.url, sleep=gh.sleeps.append)


def test_every_exchange_of_a_verb_is_checked(gh: GitHubBackend) -> None:
    number = open_fix(gh)
    before = gh.store.checked
    gh.forge.get_pr(number)
    assert gh.store.checked == before + 1 and gh.store.violations == []


def test_a_malformed_reply_is_a_violation(
    gh: GitHubBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    number = open_fix(gh)
    real = gh.store.pull_json

    def without_merge_sha(pr: dict[str, Any]) -> dict[str, Any]:
        body = real(pr)
        del body["merge_commit_sha"]
        body["number"] = str(body["number"])
        return body

    monkeypatch.setattr(gh.store, "pull_json", without_merge_sha)
    gh.forge.get_pr(number)  # the forge copes; GitHub would never send it
    found, gh.store.violations[:] = list(gh.store.violations), []
    assert any("'merge_commit_sha' is a required property" in v for v in found), found
    assert any("is not of type 'integer' at /number" in v for v in found), found
    assert all("(pulls/get)" in v for v in found)


def test_a_null_github_refuses_is_a_request_violation(gh: GitHubBackend) -> None:
    sha = gh.forge.get_pr(open_fix(gh)).head_sha
    body = {"name": "gate", "head_sha": sha, "details_url": None}
    forge_of(gh).request("POST", "/check-runs", body=body)
    found, gh.store.violations[:] = list(gh.store.violations), []
    assert found == [
        "POST /repos/acme/manifests/check-runs (checks/create) request: "
        "None is not of type 'string' at /details_url"
    ]


def test_an_unknown_operation_or_query_parameter_is_a_violation() -> None:
    rest = rest_description()
    assert rest.check_request("GET", "/repos/a/b/pulls", {"per_page": "100"}, None) == []
    assert rest.check_request("GET", "/repos/a/b/pulls", {"sort_by": "x"}, None) == [
        "GET /repos/a/b/pulls (pulls/list): unknown query parameter 'sort_by'"
    ]
    assert rest.check_request("GET", "/repos/a/b/nothing-here", {}, None) == [
        "GET /repos/a/b/nothing-here: no such operation in GitHub's description"
    ]
    assert rest.check_reply("GET", "/repos/a/b/pulls/1", 201, {}) == [
        "GET /repos/a/b/pulls/1 -> 201 (pulls/get): GitHub documents no 201 reply"
    ]


def test_nullable_becomes_an_explicit_null_type() -> None:
    schema = {"type": "string", "nullable": True, "enum": ["a"], "description": "x"}
    assert converted(schema) == {"type": ["string", "null"], "enum": ["a", None]}
    assert converted({"allOf": [{"$ref": "#/x"}], "nullable": True}) == {
        "anyOf": [{"allOf": [{"$ref": "urn:github-rest#/x"}]}, {"type": "null"}]
    }
    named = converted({"properties": {"description": {"type": "string"}}})
    assert named == {"properties": {"description": {"type": "string"}}}


def test_the_fixture_fails_the_test_whose_exchange_drifted(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest('pytest_plugins = ["tests.support.github_conformance"]')
    pytester.makepyfile(
        textwrap.dedent(
            """
            from tests.support.github_store import GitHubStore

            def test_drifts():
                GitHubStore().violations.append("GET /x -> 200 (op): 'id' is a required property")

            def test_conforms():
                GitHubStore()
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*GET /x -> 200 (op): 'id' is a required property*"])
