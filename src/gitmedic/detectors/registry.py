"""An explicit registry of detectors: duplicates are refused, listing is sorted."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import ModuleType

from gitmedic.detectors.spec import Detector, DetectorSpec


class DuplicateDetectorError(ValueError):
    pass


class UnknownDetectorError(KeyError):
    def __str__(self) -> str:
        return f"unknown detector {self.args[0]!r}"


class Registry:
    def __init__(self, detectors: Iterable[Detector] = ()) -> None:
        self._by_id: dict[str, Detector] = {}
        for d in detectors:
            self.register(d)

    def register(self, detector: Detector) -> None:
        if detector.id in self._by_id:
            raise DuplicateDetectorError(f"detector id {detector.id!r} is registered twice")
        self._by_id[detector.id] = detector

    def get(self, detector_id: str) -> Detector:
        try:
            return self._by_id[detector_id]
        except KeyError:
            raise UnknownDetectorError(detector_id) from None

    def select(self, ids: Iterable[str]) -> Registry:
        return Registry(self.get(i) for i in ids)

    def __iter__(self) -> Iterator[Detector]:
        return iter(sorted(self._by_id.values(), key=lambda d: d.id))

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, detector_id: object) -> bool:
        return detector_id in self._by_id


def from_module(module: ModuleType) -> Detector:
    """A detector from a module exposing ``SPEC`` and ``detect``."""
    spec = getattr(module, "SPEC", None)
    detect = getattr(module, "detect", None)
    if not isinstance(spec, DetectorSpec) or not callable(detect):
        raise TypeError(f"{module.__name__} must define SPEC: DetectorSpec and detect(snapshot)")
    return Detector(spec, detect)
