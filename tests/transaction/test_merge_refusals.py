"""How the transaction's forge port tells a merge refusal worth retrying from a final one."""

from __future__ import annotations

from unittest.mock import Mock

import pytest

from gitmedic.reconciler.forge import MergeNotAllowed, NotMergeable, PrState
from gitmedic.reconciler.transaction.forge_ports import ForgePorts
from gitmedic.reconciler.transaction.ports import MergeRefused


def ports(error: Exception, state: PrState = PrState.OPEN) -> ForgePorts:
    forge = Mock()
    forge.merge.side_effect = error
    forge.get_pr.return_value.state = state
    return ForgePorts(forge, Mock(), Mock(), Mock(), Mock(), main_head=lambda: "0" * 40)


@pytest.mark.parametrize(
    ("error", "state", "retryable"),
    [
        (NotMergeable("Required status check 'ci' is expected."), PrState.OPEN, True),
        (NotMergeable("Pull Request is not mergeable"), PrState.CLOSED, False),
        (MergeNotAllowed("Merge commits are not allowed on this repository."), PrState.OPEN, False),
    ],
)
def test_a_permanent_405_is_not_retried(error: Exception, state: PrState, retryable: bool) -> None:
    with pytest.raises(MergeRefused) as caught:
        ports(error, state).merge(7, "a" * 40)
    assert caught.value.retryable is retryable
