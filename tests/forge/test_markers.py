"""Hidden markers: state survives the round trip, nothing can close the comment early."""

from __future__ import annotations

import pytest

from gitmedic.reconciler.forge import (
    Conflict,
    ForgeError,
    HeadMoved,
    NotFound,
    NotMergeable,
    Permission,
    PermissionDenied,
    PrFilter,
    PrState,
    RateLimited,
    ServerError,
    Validation,
)
from gitmedic.reconciler.forge_markers import (
    extract_body_hash,
    extract_state,
    extract_topic,
    needs_body_update,
    render_body,
    strip_markers,
    topic_body,
)


def test_state_round_trips_through_a_rendered_body() -> None:
    state = {"incident": "inc-7", "attempt": 2, "findings": ["a", "b"], "ok": None}
    body = render_body("## Summary\nfixed\n", state)
    assert extract_state(body) == state
    assert strip_markers(body) == "## Summary\nfixed"
    assert "<!--" not in strip_markers(body)


def test_values_cannot_end_the_html_comment() -> None:
    state = {"note": "--> <script>", "nested": {"x": "<!-- -->"}}
    body = render_body("text", state)
    assert body.count("-->") == 2  # the state marker's and the hash marker's own
    assert extract_state(body) == state


def test_rendering_is_stable_and_hash_covers_text_and_state() -> None:
    body = render_body("text", {"b": 1, "a": 2})
    assert body == render_body("text", {"a": 2, "b": 1})
    assert extract_body_hash(body) != extract_body_hash(render_body("text!", {"a": 2, "b": 1}))
    assert extract_body_hash(body) != extract_body_hash(render_body("text", {"a": 3, "b": 1}))
    assert render_body(body, {"a": 2, "b": 1}) == body  # re-rendering a rendered body


def test_needs_update_ignores_edits_by_people_but_not_state_changes() -> None:
    stored = render_body("- [ ] hold", {"phase": "gated"})
    ticked = stored.replace("[ ]", "[x]")
    assert not needs_body_update(ticked, "- [ ] hold", {"phase": "gated"})
    assert needs_body_update(ticked, "- [ ] hold", {"phase": "merged"})
    assert needs_body_update(ticked, "- [ ] hold, changed", {"phase": "gated"})
    assert needs_body_update("a body someone wrote", "a body someone wrote", None)


@pytest.mark.parametrize("mangled", ["<!-- gitmedic:state {not json} -->", "", "<!-- x -->"])
def test_missing_or_mangled_state_reads_as_none(mangled: str) -> None:
    assert extract_state(f"text\n{mangled}") is None


def test_topics_are_hidden_and_checked() -> None:
    body = topic_body("gate/pr-3", "all green")
    assert extract_topic(body) == "gate/pr-3"
    assert extract_topic("all green") is None
    with pytest.raises(Validation):
        topic_body("bad topic", "x")


def test_permission_names_and_order() -> None:
    assert Permission.parse("push") is Permission.WRITE
    assert Permission.parse("Maintain") is Permission.MAINTAIN
    assert Permission.NONE < Permission.READ < Permission.TRIAGE < Permission.WRITE
    assert Permission.WRITE < Permission.MAINTAIN < Permission.ADMIN
    assert Permission.ADMIN.label == "admin"
    with pytest.raises(ValueError, match="owner"):
        Permission.parse("owner")


def test_closed_filter_includes_merged_prs() -> None:
    assert PrFilter.CLOSED.admits(PrState.MERGED)
    assert PrFilter.CLOSED.admits(PrState.CLOSED)
    assert not PrFilter.CLOSED.admits(PrState.OPEN)
    assert PrFilter.OPEN.admits(PrState.OPEN)
    assert all(PrFilter.ALL.admits(s) for s in PrState)


def test_every_forge_error_is_a_forge_error_with_its_facts() -> None:
    for kind in (NotFound, Conflict, HeadMoved, NotMergeable, Validation, PermissionDenied):
        assert issubclass(kind, ForgeError)
    assert issubclass(HeadMoved, Conflict) and issubclass(NotMergeable, Conflict)
    limited = RateLimited("slow down", retry_after=12.5)
    assert (str(limited), limited.retry_after) == ("slow down", 12.5)
    assert ServerError("boom", status=502).status == 502
