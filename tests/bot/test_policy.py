"""The auto-merge policy: rule matching, specificity, windows and the safe-default floors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gitmedic.bot.policy.decide import ChangeSummary, PolicyError, decide
from gitmedic.bot.policy.match import glob_match, in_window
from gitmedic.reconciler.config import (
    DEFAULT_POLICY,
    DEFAULT_RULES,
    ConfigError,
    PolicyConfig,
    PolicyRule,
    parse_config,
)

# Wednesday 2025-01-15, 10:30 UTC
WED_MORNING = datetime(2025, 1, 15, 10, 30, tzinfo=UTC)
SAT_NIGHT = datetime(2025, 1, 18, 23, 30, tzinfo=UTC)

TARGET_PORT = ChangeSummary(
    strategy="playbook",
    detectors=("service-target-port",),
    playbooks=("service-target-port",),
    fields=("spec.ports[0].targetPort",),
    files=("apps/shop/service.yaml",),
    changed_lines=2,
    namespaces=("shop",),
    kinds=("Service",),
)


def policy(*rules: PolicyRule, auto_merge: str = "low") -> PolicyConfig:
    return PolicyConfig(auto_merge=auto_merge, rules=rules)


LOW_PLAYBOOKS = PolicyRule(risk="low", description="playbooks are low", strategies=("playbook",))


@pytest.mark.parametrize(
    ("rule", "matches"),
    [
        (PolicyRule(risk="low"), True),  # no matcher: matches anything
        (PolicyRule(risk="low", strategies=("playbook", "bisect")), True),
        (PolicyRule(risk="low", strategies=("llm",)), False),
        (PolicyRule(risk="low", detectors=("service-target-port", "probe-port")), True),
        (PolicyRule(risk="low", detectors=("probe-port",)), False),
        (PolicyRule(risk="low", playbooks=("service-target-port",)), True),
        (PolicyRule(risk="low", fields=("spec.ports[*].targetPort",)), True),
        (PolicyRule(risk="low", fields=("spec.*",)), False),  # '*' stays in one segment
        (PolicyRule(risk="low", fields=("spec.**",)), True),
        (PolicyRule(risk="low", paths=("apps/*/service.yaml",)), True),
        (PolicyRule(risk="low", paths=("apps/*",)), False),
        (PolicyRule(risk="low", paths=("apps/**",)), True),
        (PolicyRule(risk="low", namespaces=("shop", "web")), True),
        (PolicyRule(risk="low", namespaces=("prod",)), False),
        (PolicyRule(risk="low", max_changed_lines=2), True),
        (PolicyRule(risk="low", max_changed_lines=1), False),
        (PolicyRule(risk="low", windows=("mon-fri 08:00-18:00",)), True),
        (PolicyRule(risk="low", windows=("sat-sun 00:00-24:00",)), False),
        # all given matchers must match
        (PolicyRule(risk="low", strategies=("playbook",), namespaces=("prod",)), False),
    ],
)
def test_each_matcher_alone(rule: PolicyRule, matches: bool) -> None:
    decision = decide(TARGET_PORT, policy(rule), WED_MORNING)
    assert (decision.risk == "low") is matches
    assert decision.matched_rule == ("policy.rules[0]" if matches else None)


def test_set_matchers_must_cover_every_item_of_the_change() -> None:
    change = ChangeSummary(
        strategy="bisect",
        fields=("spec.replicas", "spec.template.spec.containers[0].image"),
        detectors=("a", "b"),
    )
    only_replicas = PolicyRule(risk="low", fields=("spec.replicas",))
    only_a = PolicyRule(risk="low", detectors=("a",))
    assert decide(change, policy(only_replicas), WED_MORNING).risk == "medium"
    assert decide(change, policy(only_a), WED_MORNING).risk == "medium"
    both = PolicyRule(risk="low", detectors=("a", "b"))
    assert decide(change, policy(both), WED_MORNING).risk == "low"


def test_a_given_matcher_never_matches_an_empty_item_set() -> None:
    human_revert = ChangeSummary(strategy="revert", files=("apps/x.yaml",))
    rule = PolicyRule(risk="low", detectors=("service-target-port",))
    assert decide(human_revert, policy(rule), WED_MORNING).matched_rule is None


def test_no_matching_rule_defaults_to_medium_and_holds() -> None:
    decision = decide(TARGET_PORT, policy(), WED_MORNING)
    assert decision.risk == "medium"
    assert not decision.auto_merge
    assert decision.matched_rule is None
    assert decision.reason == (
        "no policy rule matched (default: medium); "
        "medium risk is above auto_merge: low -> hold for a human"
    )


def test_low_risk_within_auto_merge_merges() -> None:
    decision = decide(TARGET_PORT, policy(LOW_PLAYBOOKS), WED_MORNING)
    assert decision.risk == "low"
    assert decision.auto_merge
    assert decision.matched_rule == "playbooks are low"
    assert decision.reason == (
        "rule 'playbooks are low' matched -> low; "
        "low risk is within auto_merge: low -> merge when the gate passes"
    )


@pytest.mark.parametrize(
    ("auto_merge", "risk", "merges"),
    [
        ("low", "low", True),
        ("low", "medium", False),
        ("medium", "medium", True),
        ("medium", "high", False),
        ("never", "low", False),
    ],
)
def test_auto_merge_threshold(auto_merge: str, risk: str, merges: bool) -> None:
    rule = PolicyRule(risk=risk)
    decision = decide(TARGET_PORT, policy(rule, auto_merge=auto_merge), WED_MORNING)
    assert decision.auto_merge is merges


def test_most_specific_rule_wins_whatever_its_position() -> None:
    specific = PolicyRule(
        risk="high", description="shop is frozen", strategies=("playbook",), namespaces=("shop",)
    )
    decision = decide(TARGET_PORT, policy(specific, LOW_PLAYBOOKS), WED_MORNING)
    assert (decision.risk, decision.matched_rule) == ("high", "shop is frozen")


def test_last_of_equally_specific_rules_wins() -> None:
    first = PolicyRule(risk="low", description="first", strategies=("playbook",))
    last = PolicyRule(risk="medium", description="last", namespaces=("shop",))
    assert decide(TARGET_PORT, policy(first, last), WED_MORNING).matched_rule == "last"
    assert decide(TARGET_PORT, policy(last, first), WED_MORNING).matched_rule == "first"


@pytest.mark.parametrize(
    ("change", "risk", "floor_text"),
    [
        (ChangeSummary("playbook", kinds=("Secret",)), "high", "touches Secret"),
        (ChangeSummary("playbook", kinds=("ClusterRoleBinding",)), "high", "ClusterRoleBinding"),
        (ChangeSummary("playbook", kinds=("CustomResourceDefinition",)), "high", "Custom"),
        (ChangeSummary("playbook", kinds=("Namespace",)), "high", "touches Namespace"),
        (ChangeSummary("playbook", kinds=("Role", "Service")), "high", "touches Role"),
        (ChangeSummary("revert", deletes_object=True), "high", "deletes an object"),
        (ChangeSummary("bisect", new_image=True), "medium", "image never deployed"),
        (
            ChangeSummary("llm", llm_authored=True, fields=("spec.template.spec.hostNetwork",)),
            "medium",
            "outside the allowlist: spec.template.spec.hostNetwork",
        ),
        (
            ChangeSummary("llm", llm_authored=True, removed_fields=("spec.replicas",)),
            "medium",
            "outside the allowlist: spec.replicas",
        ),
    ],
)
def test_safe_defaults_are_a_floor_no_rule_lowers(
    change: ChangeSummary, risk: str, floor_text: str
) -> None:
    everything_low = PolicyRule(risk="low", description="yolo")
    decision = decide(change, policy(everything_low, auto_merge="medium"), WED_MORNING)
    assert decision.risk == risk
    assert not decision.auto_merge  # a floor always asks a human, even within auto_merge
    assert floor_text in decision.reason
    assert decision.reason.endswith("a safe default applies -> hold for a human")


def test_a_rule_may_raise_risk_above_a_floor() -> None:
    change = ChangeSummary("bisect", new_image=True)
    assert decide(change, policy(PolicyRule(risk="high")), WED_MORNING).risk == "high"


@pytest.mark.parametrize(
    "field",
    [
        "spec.ports[0].targetPort",
        "spec.selector.app",
        "spec.selector.matchLabels.app",
        "spec.replicas",
        "spec.template.spec.containers[1].env[3].value",
        "spec.template.spec.initContainers[0].env[0].value",
        "spec.template.spec.containers[0].livenessProbe.httpGet.port",
        "spec.template.spec.containers[0].readinessProbe.tcpSocket.port",
        "spec.template.spec.containers[0].startupProbe.httpGet.path",
        "spec.template.spec.containers[0].resources.limits.memory",
        "spec.jobTemplate.spec.template.spec.containers[0].resources.requests.cpu",
    ],
)
def test_llm_edits_inside_the_allowlist_can_be_low(field: str) -> None:
    change = ChangeSummary("llm", llm_authored=True, fields=(field,))
    decision = decide(change, policy(PolicyRule(risk="low")), WED_MORNING)
    assert (decision.risk, decision.auto_merge) == ("low", True)


def test_llm_may_remove_a_node_selector_but_not_set_one() -> None:
    path = "spec.template.spec.nodeSelector"
    removal = ChangeSummary("llm", llm_authored=True, removed_fields=(path,))
    setting = ChangeSummary("llm", llm_authored=True, fields=(f"{path}.disktype",))
    rule = policy(PolicyRule(risk="low"))
    assert decide(removal, rule, WED_MORNING).risk == "low"
    assert decide(setting, rule, WED_MORNING).risk == "medium"


def test_the_allowlist_binds_only_llm_authored_changes() -> None:
    change = ChangeSummary("bisect", fields=("spec.template.spec.hostNetwork",))
    assert decide(change, policy(PolicyRule(risk="low")), WED_MORNING).risk == "low"


@pytest.mark.parametrize(
    ("window", "when", "inside"),
    [
        ("mon-fri 08:00-18:00", WED_MORNING, True),
        ("mon-fri 08:00-18:00", WED_MORNING.replace(hour=18, minute=0), False),  # end exclusive
        ("mon-fri 08:00-18:00", WED_MORNING.replace(hour=8, minute=0), True),
        ("mon-fri 08:00-18:00", SAT_NIGHT, False),
        ("sat 22:00-02:00", SAT_NIGHT, True),
        ("sat 22:00-02:00", SAT_NIGHT + timedelta(hours=2), True),  # Sunday 01:30
        ("sat 22:00-02:00", SAT_NIGHT + timedelta(hours=3), False),  # Sunday 02:30
        ("fri 22:00-02:00", SAT_NIGHT.replace(hour=1), True),  # Saturday 01:00
        ("sat-mon 00:00-24:00", SAT_NIGHT + timedelta(days=2), True),  # wraps: Monday
        ("sat-mon 00:00-24:00", WED_MORNING, False),
        ("WED 10:00-11:00", WED_MORNING, True),
    ],
)
def test_windows_are_utc_day_ranges(window: str, when: datetime, inside: bool) -> None:
    assert in_window(window, when) is inside


def test_windows_are_read_in_utc_whatever_the_callers_zone() -> None:
    tokyo = WED_MORNING.astimezone(timezone(timedelta(hours=9)))  # 19:30 local
    rule = PolicyRule(risk="low", windows=("wed 10:00-11:00",))
    assert decide(TARGET_PORT, policy(rule), tokyo).risk == "low"


@pytest.mark.parametrize("window", ["mon-fri 8:00-18:00", "xyz 08:00-18:00", "mon 25:00-26:00"])
def test_malformed_windows_are_errors(window: str) -> None:
    with pytest.raises(PolicyError, match="window"):
        in_window(window, WED_MORNING)


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(PolicyError, match="aware"):
        decide(TARGET_PORT, policy(), datetime(2025, 1, 15, 10, 30))


@pytest.mark.parametrize(
    ("pattern", "value", "separator", "matches"),
    [
        ("a.*.c", "a.b.c", ".", True),
        ("a.*.c", "a.b.x.c", ".", False),
        ("a.**.c", "a.b.x.c", ".", True),
        ("a.?", "a.b", ".", True),
        ("x[0]", "x[0]", ".", True),  # brackets are literal
        ("x[0]", "x0", ".", False),
        ("apps/*/kustomization.yaml", "apps/web/kustomization.yaml", "/", True),
    ],
)
def test_globs(pattern: str, value: str, separator: str, matches: bool) -> None:
    assert glob_match(pattern, value, separator) is matches


def test_rules_from_the_config_file_drive_the_decision() -> None:
    config = parse_config(
        {
            "version": 1,
            "apps": [{"name": "shop", "path": "apps/shop"}],
            "policy": {
                "auto_merge": "low",
                "rules": [
                    {"risk": "low", "description": "ports in office hours",
                     "fields": ["spec.ports[*].targetPort"], "windows": ["mon-fri 08:00-18:00"]},
                ],
            },
        }
    )  # fmt: skip
    assert decide(TARGET_PORT, config.policy, WED_MORNING).auto_merge
    assert not decide(TARGET_PORT, config.policy, SAT_NIGHT).auto_merge


def _policy_of(policy: dict[str, object] | None) -> PolicyConfig:
    data: dict[str, object] = {"version": 1, "apps": [{"name": "shop", "path": "apps/shop"}]}
    if policy is not None:
        data["policy"] = policy
    return parse_config(data).policy


MEMORY = ChangeSummary(strategy="memory", files=(".gitmedic/outcomes.jsonl",), changed_lines=2)


def test_the_policy_is_taken_as_written() -> None:
    """``rules: []`` is no rule (every change medium, held); only leaving ``rules`` out
    (or the whole ``policy``) means the built-in rules; ``auto_merge: never`` merges nothing."""
    for written in (None, {}, {"auto_merge": "low"}):
        builtin = _policy_of(written)
        assert builtin.rules == DEFAULT_RULES and builtin.reverts_at_once
        assert decide(TARGET_PORT, builtin, WED_MORNING).auto_merge
        assert decide(MEMORY, builtin, WED_MORNING).auto_merge, "guard-checked memory is low"
    empty = _policy_of({"auto_merge": "low", "rules": []})
    assert empty.rules == ()
    assert not decide(TARGET_PORT, empty, WED_MORNING).auto_merge
    assert not decide(MEMORY, empty, WED_MORNING).auto_merge
    never = _policy_of({"auto_merge": "never"})
    assert never.rules == DEFAULT_RULES
    for change in (TARGET_PORT, MEMORY):
        decision = decide(change, never, WED_MORNING)
        assert decision.risk == "low" and not decision.auto_merge
        assert decision.reason.endswith("auto_merge: never -> hold for a human")


def test_revert_regressions_is_an_explicit_key_defaulting_to_at_once() -> None:
    assert _policy_of({"revert_regressions": "approval"}).reverts_at_once is False
    assert _policy_of({"revert_regressions": "auto"}).reverts_at_once is True
    with pytest.raises(ConfigError, match=r"policy\.revert_regressions"):
        _policy_of({"revert_regressions": "later"})


def test_the_init_template_writes_the_built_in_rules_explicitly(tmp_path: Path) -> None:
    from gitmedic.bot.cli.main import main
    from gitmedic.reconciler.manifests.config_file import load_config

    (tmp_path / "apps" / "shop").mkdir(parents=True)
    assert main(["init", str(tmp_path), "--name", "shop", "--path", "apps/shop"]) == 0
    policy = load_config(tmp_path / ".gitmedic" / "config.yaml").policy
    assert policy == DEFAULT_POLICY, "what init writes is what gitmedic does"
