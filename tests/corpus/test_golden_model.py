"""The golden files' rules: regeneration keeps judgements, TODO is refused, drift is caught."""

from __future__ import annotations

from typing import Any

from tests.corpus.golden import (
    REPO,
    CorpusApp,
    Run,
    differences,
    finding_id,
    parse_run,
    precision,
    regenerate,
    unjudged,
)

APP = CorpusApp("shop", "deploy", "shop")


def finding(name: str, severity: str = "critical", rule: str = "service-no-endpoints") -> Any:
    return {
        "detector": "service",
        "rule": rule,
        "severity": severity,
        "resource": {"apiVersion": "v1", "kind": "Service", "namespace": "shop", "name": name},
        "related": [{"kind": "Deployment", "namespace": "shop", "name": f"{name}-app"}],
        "summary": f"Service {name} selects no pods",
    }


def run_of(*findings: Any, exit_code: int = 1, errors: Any = ()) -> Run:
    return Run(exit_code, list(findings), list(errors), "")


def judged(golden: Any, verdict: Any = "true", why: str = "spec.selector matches no pod") -> Any:
    for entry in golden["findings"]:
        entry.update(verdict=verdict, why=why)
    return golden


def test_a_finding_id_names_detector_rule_resource_and_related() -> None:
    assert finding_id(finding("web")) == (
        "service/service-no-endpoints Service/shop/web -> Deployment/shop/web-app"
    )


def test_new_entries_are_todo_and_refused() -> None:
    golden = regenerate(APP, run_of(finding("web")), None)
    assert golden["findings"][0]["why"] == "TODO"
    assert unjudged(golden) == [
        "critical service/service-no-endpoints Service/shop/web -> Deployment/shop/web-app: "
        "verdict='TODO' why='TODO'"
    ]


def test_regeneration_keeps_the_judgement_of_a_finding_it_had() -> None:
    old = judged(regenerate(APP, run_of(finding("web")), None), "false-positive", "operator pods")
    new = regenerate(APP, run_of(finding("web"), finding("api")), old)
    by_id = {e["id"].split()[1]: e for e in new["findings"]}
    assert by_id["Service/shop/web"]["why"] == "operator pods"
    assert by_id["Service/shop/web"]["verdict"] == "false-positive"
    assert by_id["Service/shop/api"]["why"] == "TODO"


def test_a_changed_severity_needs_a_new_judgement_with_the_old_as_a_hint() -> None:
    old = judged(regenerate(APP, run_of(finding("web")), None), why="no pods")
    new = regenerate(APP, run_of(finding("web", "warning")), old)
    assert new["findings"][0]["why"] == (
        "TODO (was critical saying 'Service web selects no pods': true, no pods)"
    )
    assert unjudged(new)


def test_a_changed_summary_needs_a_new_judgement() -> None:
    old = judged(regenerate(APP, run_of(finding("web", "warning")), None), "false-positive")
    reworded = {**finding("web", "warning"), "summary": "Service web selects no pods yet"}
    new = regenerate(APP, run_of(reworded), old)
    assert new["findings"][0]["verdict"] == "TODO"
    assert new["findings"][0]["why"].startswith("TODO (was warning saying")


def test_info_findings_need_no_judgement_but_exit_2_needs_a_reason() -> None:
    golden = regenerate(APP, run_of(finding("web", "info"), exit_code=2), None)
    assert unjudged(golden) == ["exit 2 with no known_failure reason"]
    golden["known_failure"] = "List kinds are not read yet"
    assert unjudged(golden) == []


def test_an_unquoted_yaml_true_verdict_counts() -> None:
    golden = judged(regenerate(APP, run_of(finding("web")), None), verdict=True)
    assert unjudged(golden) == []
    assert precision({"shop": golden}).true_criticals == 1


def test_differences_catch_a_new_critical_a_gone_one_and_a_changed_exit() -> None:
    golden = judged(regenerate(APP, run_of(finding("web")), None))
    assert differences(golden, run_of(finding("web"))) == []
    diffs = differences(golden, run_of(finding("api"), exit_code=2))
    assert "exit code 2, golden says 1" in diffs
    rule = "service/service-no-endpoints"
    assert any(d.startswith(f"new critical: {rule} Service/shop/api") for d in diffs)
    assert any(d.startswith(f"gone critical: {rule} Service/shop/web") for d in diffs)


def test_differences_catch_a_severity_change_and_new_errors() -> None:
    golden = judged(regenerate(APP, run_of(finding("web")), None))
    error = {"file": "a.yaml", "line": 3, "message": "a.yaml:3: bad"}
    diffs = differences(golden, run_of(finding("web", "warning"), errors=[error]))
    assert any("now warning, golden says critical" in d for d in diffs)
    assert any(d.startswith("errors differ") for d in diffs)


def test_two_findings_of_one_id_stay_distinct() -> None:
    golden = regenerate(APP, run_of(finding("web"), finding("web")), None)
    assert [e["id"][-2:] for e in golden["findings"]] == ["pp", "#2"]


def test_precision_counts_false_criticals_with_their_reason() -> None:
    good = judged(regenerate(APP, run_of(finding("web")), None))
    bad = judged(regenerate(APP, run_of(finding("api")), None), "false-positive", "Rollout pods")
    result = precision({"a": good, "b": bad})
    assert (result.true_criticals, result.criticals, result.ratio) == (1, 2, 0.5)
    assert result.false_criticals == [
        "b: service/service-no-endpoints Service/shop/api -> Deployment/shop/api-app: Rollout pods"
    ]


def test_output_that_is_not_json_becomes_an_error() -> None:
    run = parse_run(2, "boom", "")
    assert run.errors and run.errors[0]["message"] == "boom"


def test_an_absolute_path_in_an_error_reads_repo_relative() -> None:
    stdout = '{"errors": [{"file": "k.yaml", "line": 1, "message": "path \'%s/tests/x\': no"}]}'
    run = parse_run(2, stdout % REPO, "")
    assert run.errors[0]["message"] == "path 'tests/x': no"


def test_differences_catch_a_judged_finding_that_now_says_something_else() -> None:
    golden = judged(regenerate(APP, run_of(finding("web")), None))
    reworded = {**finding("web"), "summary": "Service web selects no pods yet"}
    assert differences(golden, run_of(reworded)) == [
        "service/service-no-endpoints Service/shop/web -> Deployment/shop/web-app: now says "
        "'Service web selects no pods yet', golden 'Service web selects no pods'"
    ]
