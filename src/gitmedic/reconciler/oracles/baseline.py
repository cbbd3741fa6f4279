""" "No worse than before": an oracle judged against its own reading at the checkpoint.

A transaction keeps a change only if the app is no worse than before it, so a
problem that was already there (an alert firing, a workload short of replicas,
a critical finding) must not fail a fix that did not make it worse. ``NoWorse``
wraps any oracle: it takes one reading when it is built (the baseline, at the
transaction's checkpoint) and judges every reading of the window by what got
worse since.

What is wrong is read from the observation, the same for every oracle, as a map
from a problem to how much of it there is (:func:`problems`): each firing alert
(by its labels), each failing probe, each object Degraded, Missing or Unknown,
each critical finding (one each), and each workload's unavailable replicas (the
count). A reading is worse when a problem is new or grew. The window's result is
``{"worse": [problem, ...], "problems": n, "result": <the inner result>}``.

A baseline that could not be measured (the alert source was down at the
checkpoint) cannot tell old from new: then a window that sees no problem at all
passes, and one that sees any is Inconclusive (a person decides), never Failed
and never Successful.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.reconciler.oracles.metric import MetricSpec, Oracle, Reading
from gitmedic.reconciler.oracles.observation import Observation

Problems = Mapping[str, int]


def problems(obs: Observation) -> Counter[str]:
    """What is wrong in an observation, each with how much of it there is."""
    found: Counter[str] = Counter()
    for alert in obs.alerts:
        found[f"alert {alert.name}{_labels(alert.labels)} firing"] += 1
    for probe in obs.probes:
        if not probe.ok:
            found[f"probe {probe.url} failing"] = 1
    for loss in obs.capacity:
        found[f"{loss.resource}: replicas unavailable"] += loss.unavailable
    for ref in obs.degraded:
        found[f"{ref} is Degraded, Missing or Unknown"] = 1
    for fingerprint in obs.critical_findings:
        found[f"critical finding {fingerprint} firing"] = 1
    return found


def worse(now: Problems, before: Problems) -> list[str]:
    """The problems that are new or grew since ``before``, described."""
    out = []
    for problem, amount in sorted(now.items()):
        was = before.get(problem, 0)
        if amount > was:
            out.append(problem if amount == 1 and not was else f"{problem}: {amount} (was {was})")
    return out


@dataclass(frozen=True)
class Baseline:
    """The reading at the checkpoint; ``problems`` is None when it could not be taken."""

    observation: Observation
    problems: Problems | None
    error: str = ""


class NoWorse:
    """An oracle that fails when its inner oracle sees something worse than at the baseline."""

    def __init__(
        self,
        inner: Oracle,
        *,
        interval: float,
        count: int,
        described: str,
        failure_limit: int = 0,
        baseline: Baseline | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.described = described
        # A transaction resumed after a restart brings its checkpoint's baseline: read
        # again now (after the merge) it would count the change's own damage as "before".
        self.baseline = baseline if baseline is not None else take_baseline(inner)
        self.spec = MetricSpec(
            interval=interval,
            count=count,
            failure_limit=failure_limit,  # worse readings tolerated (a blip) before Failed
            success_condition=lambda r: not (r["worse"] if self.known else r["problems"]),
            failure_condition=lambda r: self.known and bool(r["worse"]),
        )

    @property
    def known(self) -> bool:
        return self.baseline.problems is not None

    def measure(self) -> Reading:
        try:
            reading = self.inner.measure()
        finally:
            _close(self.inner)
        now = problems(reading.observation)
        result: dict[str, Any] = {
            "worse": worse(now, self.baseline.problems or {}),
            "problems": sum(now.values()),
            "result": reading.result,
        }
        return Reading(result, reading.observation)


def recorded(oracles: Iterable[object]) -> dict[str, dict[str, int] | None]:
    """Each no-worse oracle's checkpoint reading by its description, for a plan to keep."""
    return {
        o.described: dict(o.baseline.problems) if o.baseline.problems is not None else None
        for o in oracles
        if isinstance(o, NoWorse)
    }


def take_baseline(oracle: Oracle) -> Baseline:
    try:
        reading = oracle.measure()
    except Exception as err:  # the checkpoint cannot see: judged later as unknown, not clean
        return Baseline(Observation(), None, f"{type(err).__name__}: {err}")
    finally:
        _close(oracle)
    return Baseline(reading.observation, _before(reading.observation))


def _before(obs: Observation) -> Counter[str]:
    """The checkpoint's problems, an alert still pending there included: its condition
    held before the change, so its firing during the window is not the change's doing."""
    found = problems(obs)
    for alert in obs.pending:
        key = f"alert {alert.name}{_labels(alert.labels)} firing"
        found[key] = max(found[key], 1)
    return found


def _close(oracle: Oracle) -> None:
    """End an HTTP oracle's connections: measurements are tens of seconds apart, longer
    than a keep-alive lasts, and checks left to the garbage collector then hold no socket."""
    close = getattr(oracle, "close", None)
    if callable(close):
        close()


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    shown = [f'{k}="{v}"' for k, v in labels if k != "alertname"]
    return "{" + ", ".join(shown) + "}" if shown else ""
