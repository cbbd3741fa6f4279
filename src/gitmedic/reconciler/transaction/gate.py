"""The gate: a status check on every gitmedic PR before it may merge.

Published as the commit status ``gitmedic/gate`` on the PR's head. It passes when
(1) the PR's desired state loads without errors, (2) every object it declares
validates strictly against the Kubernetes OpenAPI schema (kubernetes-validate),
(3) the detectors find nothing new against the base (no finding of warning or
worse whose fingerprint the base lacks, nor one of the base's at a higher
severity), and (4) every target finding that is visible in desired state is
gone. A detector that fails on either state refuses the candidate: its findings
are unknown there, never "nothing found". The targets are what the fix must
clear; a finding the app had before its fault is none
(:mod:`gitmedic.bot.transactions.fix`), so it neither blocks the fix here nor counts
against it in verification, as long as the fix leaves it as it was. A server-side
dry-run, when a real cluster is reachable, is a further check injected by the caller.

The schemas come with the ``[kube]`` extra (kubernetes-validate, 108 MB): a
core install, such as the demo's, gates without them and says so in the
summary rather than claiming a schema check it did not make.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gitmedic.detectors.finding import Finding, Severity
from gitmedic.detectors.runner import run_detectors
from gitmedic.detectors.snapshot import Obj
from gitmedic.detectors.spec import Detector
from gitmedic.reconciler.manifests.load import DesiredState

DryRun = Callable[[Sequence[Obj]], list[str]]


SCHEMAS_MISSING = "schemas not checked: pip install 'gitmedic[kube]'"


@dataclass(frozen=True)
class GateReport:
    ok: bool
    problems: tuple[str, ...]
    schema_checked: bool = True

    @property
    def summary(self) -> str:
        if self.ok and not self.schema_checked:
            return f"no new findings, targets cleared ({SCHEMAS_MISSING})"
        if self.ok:
            return "schema valid, no new findings, targets cleared"
        shown = "; ".join(self.problems[:3])
        more = f" (+{len(self.problems) - 3} more)" if len(self.problems) > 3 else ""
        return shown + more


class Gate:
    def __init__(
        self,
        desired_at: Callable[[str], DesiredState],
        detectors: Iterable[Detector],
        *,
        dry_run: DryRun | None = None,
        schema_version: str | None = None,
    ) -> None:
        self.desired_at = desired_at
        self.detectors = list(detectors)
        self.dry_run = dry_run
        self.schema_version = schema_version

    def check(self, base_sha: str, head_sha: str, targets: Iterable[str]) -> GateReport:
        head = self.desired_at(head_sha)
        problems = [f"cannot load {e}" for e in head.errors]
        schema_problems = self._schema_problems(head)
        problems += schema_problems or []
        base_findings, base_failed = _findings(self.detectors, self.desired_at(base_sha), "base")
        head_findings, head_failed = _findings(self.detectors, head, "candidate")
        problems += head_failed + base_failed
        problems += _new_or_worse(base_findings, head_findings)
        still = {f.fingerprint for f in head_findings} & set(targets)
        problems += [f"target finding {fp} is still present" for fp in sorted(still)]
        if self.dry_run is not None and not problems:
            problems += self.dry_run(list(head.snapshot))
        return GateReport(not problems, tuple(problems), schema_problems is not None)

    def _schema_problems(self, state: DesiredState) -> list[str] | None:
        """What fails strict validation; None when the schemas are not installed. The
        schemas are those ``detect`` validates with, compiled once per kind."""
        from gitmedic.reconciler.manifests.schema import KubernetesSchemas, schemas_installed

        if not schemas_installed():
            return None
        schemas = KubernetesSchemas(self.schema_version)
        out = []
        for obj in state.snapshot:
            verdict = schemas.check(obj.body)  # a custom resource: its CRD's business
            if verdict.problems:
                first = verdict.problems[0]
                out.append(
                    f"{obj.ref} does not validate: {first.path or '(object)'}: {first.message}"
                )
        return out


def _new_or_worse(base: Iterable[Finding], head: Iterable[Finding]) -> list[str]:
    """Findings of warning or worse the candidate introduces (a fingerprint the base lacks)
    or worsens (the base's finding at a higher severity). A finding the base already has,
    unchanged, is the base's and never blocks a candidate."""
    known = {f.fingerprint: f.severity.rank for f in base}
    out = []
    for f in head:
        if f.severity.rank < Severity.WARNING.rank:
            continue
        if f.fingerprint not in known:
            out.append(f"new finding {f.detector} on {f.resource}: {f.summary}")
        elif f.severity.rank > known[f.fingerprint]:
            out.append(
                f"worse finding {f.detector} on {f.resource} ({f.severity.value}): {f.summary}"
            )
    return out


def _findings(
    detectors: Iterable[Detector], state: DesiredState, which: str
) -> tuple[list[Finding], list[str]]:
    """The findings on ``state``, and each detector that failed there as a problem."""
    evaluation = run_detectors(detectors, state.snapshot)
    failed = [
        f"detector {e.detector} failed on the {which}: {e.message}" for e in evaluation.errors
    ]
    return list(evaluation.findings), failed
