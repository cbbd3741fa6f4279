"""The sim's image registry: which images exist, and what each image can run.

A real registry answers "does ``repo:tag`` exist?" and a real image either has
the binary a ``command`` names or fails to start. The sim cannot know either, so
both are an explicit input built from evidence: the images (and commands) that
appeared in the repo's baseline history ran, so they exist; so does every image
any commit of the repository names (``registry``, :mod:`gitmedic.sim.registry`);
an allowlist adds more. An image outside both fails to pull (``ErrImagePull``,
then ``ImagePullBackOff``); a command the image never ran in the baseline fails to
start (``CrashLoopBackOff``); a command the image ran for *another* workload
starts, but that workload now serves the wrong thing (the hotel-reservation
``[profile] -> [geo]`` case).

Each image has one build, named by a digest (:func:`build_digest`), and can be
pulled by it (``repo@sha256:<digest>``). A tag in ``rebuilt`` was pushed again
out of band (the ``image-retag`` fault): it now names a new build, which crashes,
while its old build is still there by digest.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gitmedic.detectors.snapshot import Snapshot, as_list
from gitmedic.detectors.topology import calls
from gitmedic.sim import ids
from gitmedic.sim.defined import DefinedObjects
from gitmedic.sim.registry import KnownImages

Command = tuple[str, ...]
COMMAND_ANNOTATION = "sim.gitmedic.dev/command-"  # + container name: the expected command


def normalize(image: str) -> str:
    """``nginx`` and ``nginx:latest`` are one image; digests are kept as they are."""
    image = image.strip()
    last = image.rsplit("/", 1)[-1]
    return image if ("@" in image or ":" in last) else f"{image}:latest"


def repository(image: str) -> str:
    image = normalize(image)
    if "@" in image:
        return image.split("@", 1)[0]
    head, _, _ = image.rpartition(":")
    return head


def build_digest(image: str, build: str = "") -> str:
    """The sha256 (hex) of the build ``image`` names: its original one, or ``build``."""
    return (ids.digest("image", image, build) if build else ids.digest("image", image)).hex() * 2


def command_of(container: Mapping[str, object]) -> Command:
    return tuple(str(c) for c in as_list(container.get("command")))


@dataclass(frozen=True)
class ImageCatalog:
    images: frozenset[str] = frozenset()
    # image repository -> the commands it ran in the baseline (() is the image's default)
    commands: Mapping[str, frozenset[Command]] = field(default_factory=dict)
    # (namespace, workload, container) -> the command it ran in the baseline
    expected: Mapping[tuple[str, str, str], Command] = field(default_factory=dict)
    # image repository -> ports it served in the baseline (declared, or probed successfully)
    ports: Mapping[str, frozenset[int | str]] = field(default_factory=dict)
    # (namespace, service) addressed in the baseline but never present there: an optional
    # dependency the app runs without (online-boutique's shopping assistant)
    optional: frozenset[tuple[str, str]] = frozenset()
    # (namespace, workload) -> env names that addressed an existing Service in the baseline
    wiring: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    # tags pushed again out of band: they name a new build that crashes (normalized)
    rebuilt: frozenset[str] = frozenset()
    # every image the repository's history names (sim.registry): pulled like the above
    registry: KnownImages = field(default_factory=KnownImages)
    # the Secrets and ConfigMaps some revision defined (sim.defined): an absent one that no
    # revision ever defined is made at runtime (a hook, an operator), so a pod finds it
    defined: DefinedObjects = field(default_factory=DefinedObjects)

    def serves(self, image: str, port: int | str) -> bool:
        """Did this image serve ``port`` in the baseline, declared or not?"""
        return port in self.ports.get(repository(image), frozenset())

    def has_image(self, image: str) -> bool:
        image = normalize(image)
        if image in self.images or self.registry.knows(image):
            return True
        repo, pinned, digest = image.partition("@sha256:")
        return bool(pinned) and any(
            repository(i) == repo and build_digest(i) == digest for i in self.images
        )

    def runs(self, image: str, command: Command) -> bool:
        known = self.commands.get(repository(image))
        return known is None or command in known

    def expected_command(self, namespace: str, workload: str, container: str) -> Command | None:
        return self.expected.get((namespace, workload, container))

    def with_images(self, images: Iterable[str]) -> ImageCatalog:
        extra = frozenset(normalize(i) for i in images)
        return replace(self, images=self.images | extra)

    def with_registry(self, registry: KnownImages) -> ImageCatalog:
        return replace(self, registry=registry)

    def with_defined(self, defined: DefinedObjects) -> ImageCatalog:
        return replace(self, defined=defined)

    def at_head(self, head: str) -> ImageCatalog:
        """The catalogue as of the commit deployed: its registry and its definitions."""
        return replace(
            self, registry=self.registry.at_head(head), defined=self.defined.at_head(head)
        )

    @classmethod
    def from_snapshots(
        cls, snapshots: Iterable[Snapshot], allow: Iterable[str] = ()
    ) -> ImageCatalog:
        """Everything that ran in these (baseline) snapshots, plus ``allow``."""
        seen = _Evidence({normalize(i) for i in allow})
        for snap in snapshots:
            seen.add(snap)
        return cls(
            frozenset(seen.images),
            _frozen(seen.commands),
            seen.expected,
            _frozen(seen.ports),
            frozenset(seen.absent - seen.present),
            _frozen(seen.wiring),
        )


@dataclass
class _Evidence:
    images: set[str]
    commands: dict[str, set[Command]] = field(default_factory=lambda: defaultdict(set))
    expected: dict[tuple[str, str, str], Command] = field(default_factory=dict)
    ports: dict[str, set[int | str]] = field(default_factory=lambda: defaultdict(set))
    present: set[tuple[str, str]] = field(default_factory=set)
    absent: set[tuple[str, str]] = field(default_factory=set)
    wiring: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))

    def add(self, snap: Snapshot) -> None:
        for call in calls(snap):
            (self.absent if call.service is None else self.present).add(
                (call.namespace, call.service_name)
            )
            if call.service is not None:
                self.wiring[(call.caller.obj.namespace, call.caller.obj.name)].add(call.env)
        for wl in snap.workloads():
            for c in wl.containers():
                image = c.body.get("image")
                if isinstance(image, str) and image:
                    self.images.add(normalize(image))
                    self.commands[repository(image)].add(command_of(c.body))
                    key = (wl.obj.namespace, wl.obj.name, c.name)
                    self.expected.setdefault(key, command_of(c.body))
                    self.ports[repository(image)] |= _served(c.body)


def _frozen(values: Mapping[Any, set[Any]]) -> dict[Any, frozenset[Any]]:
    return {k: frozenset(v) for k, v in values.items()}


def _served(container: Mapping[str, object]) -> set[int | str]:
    out: set[int | str] = set()
    for p in as_list(container.get("ports")):
        if isinstance(p, Mapping):
            out |= {v for v in (p.get("containerPort"), p.get("name")) if isinstance(v, int | str)}
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(kind)
        for handler in ("httpGet", "tcpSocket", "grpc"):
            port = probe.get(handler, {}).get("port") if isinstance(probe, Mapping) else None
            if isinstance(port, int | str):
                out.add(int(port) if isinstance(port, str) and port.isdigit() else port)
    return out
