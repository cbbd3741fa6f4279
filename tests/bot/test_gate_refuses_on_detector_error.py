"""Through the real ``gitmedic run``: a detector that fails on a candidate refuses it.

The gate judges a candidate by what the detectors find on its desired state. A
detector that fails there has no verdict, and a missing verdict is no "nothing
found": the candidate is refused, with the detector named in the gate's status.

The error is injected the way a repo can really carry one, with no test hook in
gitmedic: a learned rule (data under ``.gitmedic/rules/``) whose CEL expression
fails at run time (``int("...")`` of a word) only on the fixed Service, where its
``targetPort`` is back at 3550. So it is silent on the faulty main the monitor and
the gate's base see, and fails on the candidate alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmedic.sim.faults.git import commit_all
from tests.bot.cli_world import NEVER, SERVICE, configured_repo, prs, run_once, target_port_fault

RULE_ID = "learned-fails-on-the-fix"
RULE = f"""id: {RULE_ID}
description: 'fails at run time on the fixed Service: the gate must refuse, not pass'
severity: warning
reads: [Service]
match: >-
  object.metadata.name == "{SERVICE}" && has(object.spec.ports) &&
  object.spec.ports.exists(p, has(p.targetPort) && p.targetPort == 3550) &&
  int("not-a-number") == 0
message: '{{kind}} {{name}}: never said, the expression fails first'
playbooks: []
"""


@pytest.mark.integration
def test_a_detector_failing_on_the_candidate_makes_the_gate_refuse_it(tmp_path: Path) -> None:
    repo, app, namespace = configured_repo(tmp_path, NEVER)
    target_port_fault(repo, app, namespace)
    rules = repo / ".gitmedic" / "rules"
    rules.mkdir()
    (rules / f"{RULE_ID}.yaml").write_text(RULE)
    commit_all(repo, "a learned rule that fails on the fixed Service")

    done = run_once(repo)

    assert "Traceback" not in done.err, done.err[-3000:]
    (pr, *_) = prs(repo)
    gate = next(s for s in pr["statuses"] if s["context"] == "gitmedic/gate")
    assert gate["state"] == "failure", gate
    assert f"detector {RULE_ID} failed on the candidate" in gate["description"], gate
    assert pr["state"] != "merged", pr
