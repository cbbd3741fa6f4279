"""Text gitmedic did not write reaches PRs and issues inert; the risk text names every change.

On the shipped bot a learned rule's message (``<img src=...>``, ``</table><details>``,
``@team``) reached the PR body raw: a tracking pixel on every view, the rest of
the body (the controls among it) folded out of sight, a team pinged. And an LLM
edit that also set ``privileged: true`` was held, but the risk text named only
the image change. Here the same attacks, at the renderer and through
``gitmedic run --cluster sim --forge local --once`` with a hostile model.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmedic.bot.controller.remember import report_escalation
from gitmedic.bot.forges.local import LocalForge
from gitmedic.bot.policy.decide import ChangeSummary, PolicyConfig, decide
from gitmedic.bot.render.pr_body import PrBodyInput, render_pr_body
from gitmedic.bot.render.untrusted import untrusted
from gitmedic.bot.responder.incident import Incident
from gitmedic.bot.responder.proposal import Escalation, Proposal
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.bot.test_pr_body import playbook_body
from tests.security import test_redaction_sinks as sinks
from tests.security.scripted_provider import HostileModel, provider

HOSTILE = (
    'look <img src="https://evil.example/pixel.png"> here',
    "end</table><details><summary>more</summary>",
    "ping @org/platform-team and @alice",
    "![x](https://evil.example/track.png)",
)
RAW = ("<img", "</table>", "<details", "@org/platform-team", "@alice", "![x]")
PRIVILEGED = "spec.template.spec.containers[name=server].securityContext.privileged"
WEDNESDAY = datetime(2026, 1, 7, 10, 0, tzinfo=UTC)


def raw_markup(text: str) -> list[str]:
    return [r for r in RAW if r in text]


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_keeps_its_words_but_no_markup_or_mention(text: str) -> None:
    out = untrusted(text)
    assert raw_markup(out) == []
    assert out.replace("&lt;", "<").replace("&gt;", ">").replace("\u2060", "") == text.replace(
        "![", "!\\["
    )


def test_an_email_address_is_no_mention_and_stays_whole() -> None:
    assert untrusted("bob@example.com") == "bob@example.com"


def learned_finding(message: str) -> Finding:
    return Finding(
        detector="learned-zero-replicas",
        rule="zero-replicas",
        severity=Severity.WARNING,
        resource=Resource("Deployment", "shop", "catalog"),
        summary=message,
        evidence=f"rule message: {message}",
    )


@pytest.mark.parametrize("message", HOSTILE)
def test_a_learned_rule_s_message_reaches_the_pr_body_inert(message: str) -> None:
    data = playbook_body()
    hostile = PrBodyInput(
        **{**data.__dict__, "findings": (learned_finding(message),), "diagnosis": message}
    )
    body = render_pr_body(hostile).text
    assert raw_markup(body) == []
    assert body.count("gitmedic:control") == 2  # both controls still in sight


def test_an_escalation_issue_shows_the_model_s_reason_inert(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.yaml").write_text("kind: ConfigMap\n")
    init_repo(repo)
    forge = LocalForge(repo)
    reason = " ".join(HOSTILE)
    proposal = Proposal("inc-1", "escalate", diagnosis=reason, escalation=Escalation(reason))
    number = report_escalation(forge, Incident("inc-1", "shop", 0.0, ()), proposal)
    assert raw_markup(forge.get_issue(number).body) == []


def test_the_risk_names_every_field_an_llm_edit_sets_outside_the_allowlist() -> None:
    image = "spec.template.spec.containers[name=server].image"
    change = ChangeSummary("llm", llm_authored=True, fields=(image, PRIVILEGED))
    decision = decide(change, PolicyConfig(), WEDNESDAY)
    assert image in decision.reason and PRIVILEGED in decision.reason


def test_the_pr_body_lists_every_change_in_its_risk_section() -> None:
    changes = ("set image = 'x:1' of Deployment shop/catalog", f"set {PRIVILEGED} = True")
    body = render_pr_body(PrBodyInput(**{**playbook_body().__dict__, "changes": changes})).text
    risk = body.split("## Risk and policy", 1)[1].split("## Non-regression plan", 1)[0]
    assert all(c in risk for c in changes), risk


# -- through the real command ---------------------------------------------------------------


@pytest.mark.integration
def test_a_hostile_model_s_markup_and_privileged_edit_in_a_real_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, good = sinks.faulty_repo(tmp_path, monkeypatch)
    fix = {
        "file": sinks.MANIFEST,
        "kind": "Deployment",
        "name": sinks.SERVICE,
        "op": "set",
        "path": "spec.template.spec.containers[name=server].image",
        "value": good,
    }
    privileged = {**fix, "path": PRIVILEGED, "value": True}
    model = HostileModel([("read_file", {"path": sinks.MANIFEST})], [fix, privileged], HOSTILE)
    env = {**os.environ, "SCRIPTED_API_KEY": sinks.API_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with provider(model) as api_base:
        sinks.write_config(repo, api_base)
        commit_all(repo, "the user's last commit")
        argv = ("run", str(repo), "--cluster", "sim", "--forge", "local", "--once")
        run = sinks.gitmedic(*argv, env=env)
    assert run.returncode in (0, 1), run.stderr[-3000:]
    prs = LocalForge(repo, create=False).list_prs()
    assert prs, f"the model's fix was never proposed: {run.stderr[-2000:]}"
    for pr in prs:
        assert raw_markup(pr.body) == [], pr.body
    risk = prs[0].body.split("## Risk and policy", 1)[1].split("## Non-regression plan", 1)[0]
    assert "securityContext.privileged" in risk, risk
