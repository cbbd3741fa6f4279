"""Incidents from persistence transitions: debounce, one per application, pending
activations, closing, and ids that a restarted bot derives again."""

from __future__ import annotations

from dataclasses import replace

from gitmedic.bot.controller.loop import learned_ids
from gitmedic.bot.responder.incident import Incidents, incident_id, open_incident
from gitmedic.detectors.builtin import builtin_registry
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.runner import Transition

T0 = 1_780_000_000.0


def finding(name: str, detector: str = "service-target-port") -> Finding:
    return Finding(detector, detector, Severity.CRITICAL, Resource("Service", "shop", name),
                   f"{name} is broken")  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


A, B, C = finding("cart"), finding("catalog"), finding("payment")


def test_findings_within_the_debounce_window_join_one_incident() -> None:
    clock = Clock()
    book = Incidents(debounce_s=60, clock=clock)
    book, (first,) = book.observe("shop", Transition(activated=(A,)))
    clock.now += 59
    book, (grown,) = book.observe("shop", Transition(activated=(B,)))
    assert grown.id == first.id and grown.findings == (A, B)
    assert grown.activations == ((A.fingerprint, T0), (B.fingerprint, T0 + 59))
    assert grown.activated_at(B) == T0 + 59
    assert book.ready() == []
    clock.now += 2
    assert [i.id for i in book.ready()] == [first.id]


def test_later_activations_wait_and_open_the_next_incident_when_it_closes() -> None:
    clock = Clock()
    book = Incidents(debounce_s=60, clock=clock)
    book, (first,) = book.observe("shop", Transition(activated=(A,)))
    clock.now += 120
    book, changed = book.observe("shop", Transition(activated=(C,)))
    assert changed == () and book.open["shop"].findings == (A,)
    assert [f for f, _ in book.pending["shop"]] == [C]
    clock.now += 10
    book, (closed, successor) = book.observe("shop", Transition(cleared=(A,)))
    assert closed.id == first.id and closed.closed_at == T0 + 130 and not closed.is_open
    assert successor.findings == (C,) and successor.opened_at == T0 + 120
    assert book.open["shop"] == successor and "shop" not in book.pending


def test_one_open_incident_per_application_and_apps_are_independent() -> None:
    book = Incidents(clock=Clock())
    book, _ = book.observe("shop", Transition(activated=(A,)))
    book, (other,) = book.observe("blog", Transition(activated=(B,)))
    assert set(book.open) == {"shop", "blog"} and other.app == "blog"


def test_a_partly_cleared_incident_stays_open_and_a_cleared_one_closes() -> None:
    book = Incidents(clock=Clock())
    book, _ = book.observe("shop", Transition(activated=(A, B)))
    book, (partly,) = book.observe("shop", Transition(cleared=(A,)))
    assert partly.is_open and partly.active == (B,)
    book, (closed,) = book.observe("shop", Transition(cleared=(B,)))
    assert not closed.is_open and book.open == {}


def test_ids_are_deterministic_and_safe_in_branch_names() -> None:
    one = incident_id("Shop App", T0, [A, B])
    assert one == incident_id("Shop App", T0, [B, A])
    assert one.startswith("shop-app-20260528T") and len(one.rsplit("-", 1)[1]) == 8
    assert one != incident_id("Shop App", T0, [A])
    assert one != incident_id("Shop App", T0 + 1, [A, B])
    again = open_incident("Shop App", [(B, T0 + 5), (A, T0)])
    assert again.id == incident_id("Shop App", T0, [A]) and again.opened_at == T0


def test_an_incident_of_a_class_the_repo_has_learned_is_ready_at_once() -> None:
    clock = Clock()
    learned = finding("cart", "learned-pod-image-pull-with-command")
    book = Incidents(debounce_s=60, clock=clock, known=frozenset({learned.detector}))
    book, (first,) = book.observe("shop", Transition(activated=(A, learned)))
    assert [i.id for i in book.ready()] == [first.id]
    other = Incidents(debounce_s=60, clock=clock, known=frozenset({learned.detector}))
    other, _ = other.observe("shop", Transition(activated=(A,)))
    assert other.ready() == []  # no learned finding: the debounce still groups the fault


def test_the_learned_classes_are_the_repos_detectors_beside_the_builtins() -> None:
    builtins = list(builtin_registry())
    rule = builtins[0]
    learned = replace(rule, spec=replace(rule.spec, id="learned-x"))
    assert learned_ids([*builtins, learned]) == {"learned-x"}
