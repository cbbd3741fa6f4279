"""The detector SDK: pure functions over a frozen snapshot.

Public surface for built-in and learned detectors::

    from gitmedic.detectors import DetectorSpec, Finding, Resource, Scope, Severity, Snapshot
"""

from gitmedic.detectors.finding import MASK, Finding, Resource, Severity, mask, sort_findings
from gitmedic.detectors.registry import Registry, from_module
from gitmedic.detectors.runner import Evaluation, Persistence, run_detectors
from gitmedic.detectors.snapshot import Container, Mode, Obj, Snapshot, Source, Workload
from gitmedic.detectors.spec import Detector, DetectorSpec, Scope, Uncertainty

__all__ = [
    "MASK",
    "Container",
    "Detector",
    "DetectorSpec",
    "Evaluation",
    "Finding",
    "Mode",
    "Obj",
    "Persistence",
    "Registry",
    "Resource",
    "Scope",
    "Severity",
    "Snapshot",
    "Source",
    "Uncertainty",
    "Workload",
    "from_module",
    "mask",
    "run_detectors",
    "sort_findings",
]
