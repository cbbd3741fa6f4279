"""The snapshot: a read-only view of Kubernetes objects, indexed for detectors.

Objects keep the real API's JSON shape (camelCase, ``apiVersion`` and ``kind``
on every object); the snapshot only adds indexes so detectors never scan every
object for every object. It is built once per evaluation from either the desired
state (manifests) or the live state (a cluster list), and detectors treat it as
frozen: they read bodies, never write them (a test guards this by digest).

Secret values are masked when the snapshot is built, so no detector, prompt or
rendering can read them: only the key names survive.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gitmedic.detectors.finding import MASK, Resource

# re-exported: the snapshot is where detectors and readers have always found them
from gitmedic.detectors.kinds import CLUSTER_SCOPED as CLUSTER_SCOPED
from gitmedic.detectors.kinds import LISTED_DESIRED_ONLY
from gitmedic.detectors.kinds import WORKLOAD_KINDS as WORKLOAD_KINDS
from gitmedic.detectors.origin import FieldLines, FieldOrigin
from gitmedic.detectors.pod_owners import rollout_template_ref
from gitmedic.detectors.schema import SchemaCheck
from gitmedic.detectors.selection import label_index, select, select_pod_owners
from gitmedic.detectors.selection import selector_matches as selector_matches

JSON = Mapping[str, Any]
T = TypeVar("T")


class Mode(enum.Enum):
    DESIRED = "desired"
    LIVE = "live"


@dataclass(frozen=True)
class Source:
    """Where an object was read from (file and line), and for a rendered one the values
    lines its fields come from (:mod:`gitmedic.detectors.origin`)."""

    file: str
    line: int  # 1-based line of the object's first key
    document: int = 0
    # a tuple, or for a chart's object LazyOrigins (its marked render runs when first read)
    origins: Sequence[FieldOrigin] = ()
    # a rendered object: "helm" or "kustomize", and the Chart.yaml or kustomization file
    renderer: str = ""
    render_root: str = ""
    # the line of each field of a plain YAML object, read from its file on demand
    fields: FieldLines | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Obj:
    """One Kubernetes object in the snapshot."""

    ref: Resource
    body: JSON
    source: Source | None = None

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def name(self) -> str:
        return self.ref.name

    @property
    def namespace(self) -> str:
        return self.ref.namespace

    @property
    def metadata(self) -> JSON:
        return _mapping(self.body.get("metadata"))

    @property
    def labels(self) -> JSON:
        return _mapping(self.metadata.get("labels"))

    @property
    def annotations(self) -> JSON:
        return _mapping(self.metadata.get("annotations"))

    @property
    def spec(self) -> JSON:
        return _mapping(self.body.get("spec"))

    @property
    def status(self) -> JSON:
        return _mapping(self.body.get("status"))


@dataclass(frozen=True)
class Container:
    body: JSON
    init: bool

    @property
    def name(self) -> str:
        return str(self.body.get("name", ""))

    @property
    def ports(self) -> list[JSON]:
        return [p for p in _list(self.body.get("ports")) if isinstance(p, Mapping)]

    @property
    def env(self) -> list[JSON]:
        return [e for e in _list(self.body.get("env")) if isinstance(e, Mapping)]

    @property
    def list_field(self) -> str:
        """The pod spec list holding it, for field paths: ``containers`` or ``initContainers``."""
        return "initContainers" if self.init else "containers"

    def serves(self, port: int | str) -> bool:
        """Does this container declare ``port`` (a number, or a port name)?"""
        for p in self.ports:
            if isinstance(port, str) and p.get("name") == port:
                return True
            if isinstance(port, int) and p.get("containerPort") == port:
                return True
        return False


@dataclass(frozen=True)
class Workload:
    """An object with a pod template: its labels, pod spec and desired replicas."""

    obj: Obj
    template_labels: JSON
    pod_spec: JSON

    @property
    def ref(self) -> Resource:
        return self.obj.ref

    @property
    def replicas(self) -> int | None:
        """Desired pods: None where not fixed (DaemonSet, Job, CronJob)."""
        if self.obj.kind in ("DaemonSet", "Job", "CronJob"):
            return None
        if self.obj.kind == "Pod":
            return 1
        value = self.obj.spec.get("replicas", 1)
        return value if isinstance(value, int) else 1

    def containers(self, *, init: bool = True) -> list[Container]:
        out = [Container(c, False) for c in _list(self.pod_spec.get("containers"))]
        if init:
            out += [Container(c, True) for c in _list(self.pod_spec.get("initContainers"))]
        return [c for c in out if isinstance(c.body, Mapping)]


class Snapshot:
    """Objects indexed by kind, namespace and name, plus the lookups detectors need."""

    def __init__(
        self,
        objects: Iterable[Obj],
        *,
        mode: Mode = Mode.DESIRED,
        revision: str = "",
        taken_at: str = "",
        schema: SchemaCheck | None = None,
    ) -> None:
        self.mode = mode
        self.schema = schema  # the loader's schema validation, read by schema-invalid
        self.revision = revision
        # RFC 3339 time a live snapshot was read ("" unknown): "now" for ages, so a pod
        # stuck in a quiet namespace (no newer event) still ages
        self.taken_at = taken_at
        self._all: list[Obj] = []
        self._by_kind: dict[str, list[Obj]] = defaultdict(list)
        self._by_key: dict[tuple[str, str, str], Obj] = {}
        for obj in objects:
            if obj.kind == "Secret":
                obj = _masked_secret(obj)
            self._all.append(obj)
            self._by_kind[obj.kind].append(obj)
            self._by_key[(obj.kind, obj.namespace, obj.name)] = obj
        self._workloads: list[Workload] | None = None
        self._wl_by_namespace: dict[str, list[Workload]] | None = None
        self._wl_label_index: dict[tuple[str, str, str], list[Workload]] | None = None
        self._pod_label_index: dict[tuple[str, str, str], list[Obj]] | None = None
        self._events: dict[tuple[str, str, str], list[Obj]] | None = None
        self._derived: dict[str, Any] = {}

    # -- plain lookups ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Iterator[Obj]:
        return iter(self._all)

    @property
    def live(self) -> bool:
        return self.mode is Mode.LIVE

    def kinds(self) -> set[str]:
        return set(self._by_kind)

    def of_kind(self, kind: str, namespace: str | None = None) -> list[Obj]:
        objs = self._by_kind.get(kind, [])
        if namespace is None:
            return list(objs)
        return [o for o in objs if o.namespace == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self._by_key.get((kind, namespace, name))

    def has(self, kind: str, namespace: str, name: str) -> bool:
        return (kind, namespace, name) in self._by_key

    def namespaces(self) -> set[str]:
        return {o.namespace for o in self._all if o.namespace}

    def source(self, ref: Resource) -> Source | None:
        obj = self._by_key.get((ref.kind, ref.namespace, ref.name))
        return obj.source if obj else None

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """A value computed once per snapshot from its objects (indexes, graphs)."""
        if key not in self._derived:
            self._derived[key] = compute()
        value: T = self._derived[key]
        return value

    # -- workloads and selection ------------------------------------------------------

    def workloads(self, namespace: str | None = None) -> list[Workload]:
        """Top-level workloads: objects with a pod template that no workload owns."""
        if namespace is None:
            return list(self._all_workloads())
        return list(self._workloads_in(namespace))

    def workload(self, ref: Resource) -> Workload | None:
        obj = self.get(ref.kind, ref.namespace, ref.name)
        return self._workload(obj) if obj else None

    def workloads_selected_by(self, namespace: str, selector: JSON) -> list[Workload]:
        """Workloads whose pods match an equality selector: their template labels plus the
        labels their controller adds (:mod:`gitmedic.detectors.selection`)."""
        if self._wl_label_index is None:
            self._wl_label_index = label_index(
                self._all_workloads(), lambda w: (w.obj.namespace, w.template_labels)
            )
        return select_pod_owners(
            self._wl_label_index,
            self._workloads_in(namespace),
            namespace,
            selector,
            lambda w: (w.obj.kind, w.obj.name, w.template_labels),
        )

    def pods_selected_by(self, namespace: str, selector: JSON) -> list[Obj]:
        if self._pod_label_index is None:
            self._pod_label_index = label_index(
                self._by_kind.get("Pod", []), lambda p: (p.namespace, p.labels)
            )
        return select(self._pod_label_index, namespace, selector, lambda p: p.labels)

    def owner_workload(self, pod: Obj) -> Resource:
        """The top-level workload that owns a pod (through its ReplicaSet), or the pod."""
        current = pod
        for _ in range(3):
            owner = _controller(current)
            if owner is None:
                break
            kind, name = owner
            parent = self.get(kind, pod.namespace, name)
            if parent is None:
                if kind == "ReplicaSet" and "-" in name:
                    return Resource("Deployment", pod.namespace, name.rsplit("-", 1)[0], "apps/v1")
                return Resource(kind, pod.namespace, name, "apps/v1")
            current = parent
        return current.ref

    # -- related objects --------------------------------------------------------------

    def events_for(self, ref: Resource) -> list[Obj]:
        """Events whose involvedObject (or regarding) is ``ref``, oldest first."""
        if self._events is None:
            self._events = defaultdict(list)
            for ev in self._by_kind.get("Event", []):
                inv = _mapping(ev.body.get("involvedObject") or ev.body.get("regarding"))
                key = (
                    str(inv.get("kind", "")),
                    str(inv.get("namespace", "")),
                    str(inv.get("name", "")),
                )
                self._events[key].append(ev)
            for evs in self._events.values():
                evs.sort(key=_event_time)
        return list(self._events.get((ref.kind, ref.namespace, ref.name), []))

    def ready_endpoints(self, service: Obj) -> int | None:
        """Ready addresses behind a Service, from Endpoints or EndpointSlices; None if unknown."""
        ep = self.get("Endpoints", service.namespace, service.name)
        slices = [
            s
            for s in self._by_kind.get("EndpointSlice", [])
            if s.namespace == service.namespace
            and s.labels.get("kubernetes.io/service-name") == service.name
        ]
        if ep is None and not slices:
            return None
        if slices:
            return sum(
                1
                for s in slices
                for e in _list(s.body.get("endpoints"))
                if _mapping(_mapping(e).get("conditions")).get("ready", True) is not False
            )
        assert ep is not None
        return sum(len(_list(_mapping(s).get("addresses"))) for s in _list(ep.body.get("subsets")))

    # -- internals --------------------------------------------------------------------

    def _all_workloads(self) -> list[Workload]:
        if self._workloads is None:
            self._workloads = [w for w in map(self._workload, self._top_level()) if w]
        return self._workloads

    def _workloads_in(self, namespace: str) -> list[Workload]:
        """One namespace's workloads, indexed once: every Service of a namespace asks."""
        if self._wl_by_namespace is None:
            self._wl_by_namespace = defaultdict(list)
            for w in self._all_workloads():
                self._wl_by_namespace[w.obj.namespace].append(w)
        return self._wl_by_namespace.get(namespace, [])

    def _top_level(self) -> Iterator[Obj]:
        for kind in WORKLOAD_KINDS:
            for obj in self._by_kind.get(kind, []):
                owner = _controller(obj)
                if owner is None or owner[0] not in WORKLOAD_KINDS:
                    yield obj
                elif owner[0] in LISTED_DESIRED_ONLY and not self.has(
                    owner[0], obj.namespace, owner[1]
                ):
                    yield obj  # its owner is not read live: what it owns stands for it

    def _workload(self, obj: Obj) -> Workload | None:
        if obj.kind == "Pod":
            return Workload(obj, obj.labels, obj.spec)
        spec = obj.spec
        if obj.kind == "CronJob":
            spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
        elif obj.kind not in WORKLOAD_KINDS:
            return None
        elif obj.kind == "Rollout" and (ref := rollout_template_ref(spec)):
            # An Argo Rollout runs the template of the Deployment its workloadRef names.
            source = self.get(ref[0], obj.namespace, ref[1])
            spec = source.spec if source is not None else {}
        template = _mapping(spec.get("template"))
        labels = _mapping(_mapping(template.get("metadata")).get("labels"))
        return Workload(obj, labels, _mapping(template.get("spec")))


def pod_spec_of(obj: Obj) -> JSON:
    """The pod spec inside any workload kind (the object's own spec for a Pod)."""
    if obj.kind == "Pod":
        return obj.spec
    spec = obj.spec
    if obj.kind == "CronJob":
        spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
    return _mapping(_mapping(spec.get("template")).get("spec"))


def _controller(obj: Obj) -> tuple[str, str] | None:
    for ref in _list(obj.metadata.get("ownerReferences")):
        ref = _mapping(ref)
        if ref.get("controller", True):
            return str(ref.get("kind", "")), str(ref.get("name", ""))
    return None


def _event_time(ev: Obj) -> str:
    b = ev.body
    return str(b.get("lastTimestamp") or b.get("eventTime") or b.get("firstTimestamp") or "")


def _masked_secret(obj: Obj) -> Obj:
    body = dict(obj.body)
    for key in ("data", "stringData"):
        if isinstance(body.get(key), Mapping):
            body[key] = {k: MASK for k in body[key]}
    return Obj(obj.ref, body, obj.source)


def _mapping(value: Any) -> JSON:
    # a dict first: every parsed body is made of them, and the ABC check costs 3x more
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


mapping = _mapping
as_list = _list
