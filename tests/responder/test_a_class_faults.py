"""Every A-class fault gitmedic can see, on two real apps: the fault commit leads to a
proposal that restores the original bytes exactly, by playbook or bisect, with zero
tokens (the completion function fails the test if it is ever called)."""

from __future__ import annotations

import pytest

from gitmedic.bot.responder.responder import Responder
from tests.responder.catalog import FAULTS, NOT_COVERED
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.support import Fault, inject


@pytest.mark.integration
@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
def test_the_fault_commit_is_undone_exactly_with_zero_tokens(
    fault: Fault, make_app: MakeApp
) -> None:
    app = make_app(fault.app, fault.nodes)
    original = app.files()
    found, incident = inject(app, fault)
    assert incident is not None, f"no detector saw {fault.id}"
    assert app.files() != original

    proposal = Responder(app.repo, completion=no_llm).propose(incident)

    assert proposal.strategy in ("playbook", "bisect"), proposal.diagnosis
    assert (proposal.tokens, proposal.cost_usd, proposal.escalation) == (0, 0.0, None)
    assert proposal.commit is not None and proposal.commit.subject == f"inject {fault.name}"
    app.repo.apply(proposal.edits)
    assert app.files() == original, proposal.fields
    assert not [f for f in app.findings(None) if f in found]


def test_every_fault_class_is_covered_on_two_apps_or_explained() -> None:
    classes = {f.name for f in FAULTS}
    for name in classes:
        assert len([f for f in FAULTS if f.name == name]) == 2, name
    assert not classes & set(NOT_COVERED)
    assert len(classes) + len(NOT_COVERED) == 33  # the A table of FAULTS.md
