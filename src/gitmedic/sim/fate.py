"""What will happen to a pod: decided once per pod template, rendered over time elsewhere.

The rules are FAULTS.md's symptoms column, in the kubelet's order: volumes mount
first (a missing ConfigMap or Secret volume leaves the pod ``ContainerCreating``
with ``FailedMount``; one the baseline read and no revision ever defined is made at
runtime and found, see :mod:`gitmedic.sim.defined`), then each image is pulled (not
in the catalog: ``ErrImagePull``/``ImagePullBackOff``), then the container's env is resolved
(missing ConfigMap/Secret/key: ``CreateContainerConfigError``), then it runs and
may crash: a command the image cannot run, a port another container of the pod
already binds, a memory limit under the working set (``OOMKilled``), a liveness
probe that kills it (undeclared port, or a probe budget shorter than start-up).
A readiness probe on an undeclared port keeps it running but never Ready.

Ports: a container that declares no ports at all tells us nothing (many images
listen without declaring), so only a container that declares ports can be
shown not to serve one; the same convention as the built-in detectors.

Working set, CPU use and start-up time default to small values and can be set
per container by annotations on the workload or its pod template
(``sim.gitmedic.dev/working-set-<container>: 200Mi``,
``sim.gitmedic.dev/cpu-usage-<container>: 300m``,
``sim.gitmedic.dev/startup-seconds-<container>: 20``); ``unready-<container>: <why>``
keeps a container with a readiness probe running but never Ready (a wedge).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.quantity import MI, millicores, whole_bytes
from gitmedic.detectors.snapshot import Container, Snapshot, Workload, as_list, mapping
from gitmedic.detectors.topology import in_cluster_target
from gitmedic.sim import ids
from gitmedic.sim.catalog import COMMAND_ANNOTATION, ImageCatalog, command_of, normalize
from gitmedic.sim.defined import DefinedObjects

ANNOTATION = "sim.gitmedic.dev/"
REBUILT = "rebuilt"
DEFAULT_WORKING_SET = 16 * MI
DEFAULT_CPU_USE_M = 50
_WAIT_TOOLS = re.compile(
    r"\b(?:nslookup|getent\s+hosts|ping|nc|wget|curl|telnet)\s+(?:-\S+\s+)*"
    r"(?:https?://)?([a-z0-9][a-z0-9.-]*[a-z0-9])(?![a-z0-9.-]|:/)"
)
_VAR = re.compile(r"\$(?:\{(\w+)\}|\((\w+)\)|(\w+))")


class Outcome(enum.Enum):
    RUNS = "runs"  # starts; Ready when its readiness allows (init: completes)
    PULL_FAILS = "pull-fails"
    CONFIG_ERROR = "config-error"
    CRASHES = "crashes"
    HANGS = "hangs"  # an init container that never completes


@dataclass(frozen=True)
class ContainerFate:
    name: str
    image: str
    init: bool
    outcome: Outcome
    message: str = ""
    exit_reason: str = ""  # terminated.reason of each crash
    exit_code: int = 0
    run_s: float = 0.0  # how long each run lasts before it crashes
    startup_s: float = 2.0  # until it serves
    ready_delay_s: float | None = 0.0  # after start; None = never Ready
    probe_failure: str = ""  # Unhealthy event message (readiness or liveness)
    liveness_kill: bool = False
    misbehaves: bool = False  # runs and is Ready, but serves another service's code
    cpu_use_m: int = DEFAULT_CPU_USE_M
    cpu_limit_m: int | None = None
    build: str = ""  # "" the tag's original build; else the one it names since a re-push


@dataclass(frozen=True)
class PodFate:
    mount_error: str  # "" when every volume mounts
    inits: tuple[ContainerFate, ...]
    containers: tuple[ContainerFate, ...]

    @property
    def all(self) -> tuple[ContainerFate, ...]:
        return self.inits + self.containers


def pod_fate(wl: Workload, snapshot: Snapshot, catalog: ImageCatalog, seed: int) -> PodFate:
    ns = wl.obj.namespace
    notes = {**_annotations(wl.obj.annotations), **_template_annotations(wl)}
    mount = _mount_error(wl.pod_spec, snapshot, ns, catalog.defined)
    inits = tuple(
        _container(wl, c, snapshot, catalog, notes, seed) for c in wl.containers() if c.init
    )
    mains = tuple(
        _container(wl, c, snapshot, catalog, notes, seed) for c in wl.containers(init=False)
    )
    return PodFate(mount, inits, mains)


def _container(
    wl: Workload,
    c: Container,
    snapshot: Snapshot,
    catalog: ImageCatalog,
    notes: Mapping[str, str],
    seed: int,
) -> ContainerFate:
    image = str(c.body.get("image", ""))
    key = (seed, wl.obj.namespace, wl.obj.name, c.name)
    startup = _float(notes.get(f"{ANNOTATION}startup-seconds-{c.name}")) or ids.between(
        1.0, 4.0, "startup", *key
    )
    limits = mapping(mapping(c.body.get("resources")).get("limits"))
    base = ContainerFate(
        c.name,
        image,
        c.init,
        Outcome.RUNS,
        startup_s=startup,
        cpu_use_m=millicores(notes.get(f"{ANNOTATION}cpu-usage-{c.name}")) or DEFAULT_CPU_USE_M,
        cpu_limit_m=millicores(limits.get("cpu")),
    )
    if not catalog.has_image(image):
        return _with(base, Outcome.PULL_FAILS, _pull_message(image))
    if normalize(image) in catalog.rebuilt:  # the tag was pushed again: its new build crashes
        broken = _crash_with("Error", 2, 1.0, f"panic: the build {image} names now fails at start")
        return _replace(base, {**broken, "build": REBUILT})
    config = _config_error(c, snapshot, wl.obj.namespace, catalog.defined)
    if config:
        return _with(base, Outcome.CONFIG_ERROR, config)
    if c.init and _WAIT_TOOLS.search(_command_text(c)):
        # A wait-for loop (``until nslookup db; do sleep 2; done``) is shell any image with
        # a shell runs: it completes once its host resolves and never crashes meanwhile.
        hang = _init_hang(c, snapshot, wl.obj.namespace)
        return _with(base, Outcome.HANGS, hang) if hang else base
    crash = _crash(wl, c, catalog, notes, key)
    if crash is not None:
        return _replace(base, crash)
    if c.init:
        return base
    unready = notes.get(f"{ANNOTATION}unready-{c.name}")
    if unready and c.body.get("readinessProbe"):
        # a runtime wedge (faults.demand): alive for liveness, never Ready
        return _replace(
            base, {"ready_delay_s": None, "probe_failure": f"Readiness probe failed: {unready}"}
        )
    return _readiness(wl, c, catalog, base)


def _with(base: ContainerFate, outcome: Outcome, message: str) -> ContainerFate:
    return _replace(base, {"outcome": outcome, "message": message})


def _replace(base: ContainerFate, changes: Mapping[str, Any]) -> ContainerFate:
    from dataclasses import replace

    return replace(base, **changes)


def _pull_message(image: str) -> str:
    return (
        f'failed to pull and unpack image "{image}": failed to resolve reference '
        f'"{image}": {image}: not found'
    )


# -- configuration --------------------------------------------------------------------


def _config_error(c: Container, snapshot: Snapshot, ns: str, defined: DefinedObjects) -> str:
    for env in c.env:
        source = mapping(env.get("valueFrom"))
        for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = mapping(source.get(field))
            if ref and not ref.get("optional"):
                problem = _key_problem(snapshot, kind, ns, ref, defined)
                if problem:
                    return problem
    for src in as_list(c.body.get("envFrom")):
        for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = mapping(mapping(src).get(field))
            if ref and not ref.get("optional") and _missing(snapshot, kind, ns, ref, defined):
                return f'{kind.lower()} "{ref.get("name")}" not found'
    return ""


def _missing(
    snapshot: Snapshot, kind: str, ns: str, ref: Mapping[str, Any], defined: DefinedObjects
) -> bool:
    name = str(ref.get("name", ""))
    return not snapshot.has(kind, ns, name) and not defined.made_at_runtime(kind, name)


def _key_problem(
    snapshot: Snapshot, kind: str, ns: str, ref: Mapping[str, Any], defined: DefinedObjects
) -> str:
    name, key = str(ref.get("name", "")), str(ref.get("key", ""))
    obj = snapshot.get(kind, ns, name)
    if obj is None:
        # made at runtime (a hook, an operator): its keys are whatever its maker wrote
        return "" if defined.made_at_runtime(kind, name) else f'{kind.lower()} "{name}" not found'
    if key not in _keys(obj.body):
        return f"couldn't find key {key} in {kind} {ns}/{name}"
    return ""


def _keys(body: Mapping[str, Any]) -> set[str]:
    return {str(k) for f in ("data", "binaryData", "stringData") for k in mapping(body.get(f))}


def _mount_error(
    pod_spec: Mapping[str, Any], snapshot: Snapshot, ns: str, defined: DefinedObjects
) -> str:
    for vol in as_list(pod_spec.get("volumes")):
        vol = mapping(vol)
        sources = [vol] + [
            mapping(s) for s in as_list(mapping(vol.get("projected")).get("sources"))
        ]
        for src in sources:
            problem = _volume_source_problem(src, snapshot, ns, defined)
            if problem:
                return f'MountVolume.SetUp failed for volume "{vol.get("name")}" : {problem}'
    return ""


def _volume_source_problem(
    src: Mapping[str, Any], snapshot: Snapshot, ns: str, defined: DefinedObjects
) -> str:
    for field, kind, name_key in (
        ("configMap", "ConfigMap", "name"),
        ("secret", "Secret", "secretName"),
    ):
        ref = mapping(src.get(field))
        if not ref or ref.get("optional"):
            continue
        name = str(ref.get(name_key) or ref.get("name") or "")
        obj = snapshot.get(kind, ns, name)
        if obj is None and defined.made_at_runtime(kind, name):
            continue  # made by a hook or an operator the sim does not run
        if obj is None:
            return f'{kind.lower()} "{name}" not found'
        keys = _keys(obj.body)
        for item in as_list(ref.get("items")):
            if str(mapping(item).get("key")) not in keys:
                noun = "configmap" if kind == "ConfigMap" else "secret"
                return f"{noun} references non-existent config key: {mapping(item).get('key')}"
    return ""


# -- running --------------------------------------------------------------------------


def _crash(
    wl: Workload,
    c: Container,
    catalog: ImageCatalog,
    notes: Mapping[str, str],
    key: tuple[object, ...],
) -> dict[str, Any] | None:
    image, command = str(c.body.get("image", "")), command_of(c.body)
    declared = notes.get(f"{COMMAND_ANNOTATION}{c.name}")
    if not catalog.runs(image, command):
        return _crash_with(
            "StartError",
            128,
            0.0,
            f'exec: "{command[0] if command else ""}": executable file not found in $PATH',
        )
    if declared is not None and " ".join(command) != declared:
        return _crash_with("Error", 1, 1.0, f"unexpected command {list(command)}")
    conflict = _port_conflict(wl, c)
    if conflict:
        return _crash_with("Error", 1, 1.0, f"listen tcp :{conflict}: bind: address already in use")
    limit = whole_bytes(mapping(mapping(c.body.get("resources")).get("limits")).get("memory"))
    working = whole_bytes(notes.get(f"{ANNOTATION}working-set-{c.name}")) or DEFAULT_WORKING_SET
    if limit is not None and limit < working:
        return _crash_with("OOMKilled", 137, ids.between(2.0, 5.0, "oom", *key), "")
    return _liveness_crash(c, catalog, notes, key)


def _crash_with(reason: str, code: int, run_s: float, message: str) -> dict[str, Any]:
    return {
        "outcome": Outcome.CRASHES,
        "exit_reason": reason,
        "exit_code": code,
        "run_s": run_s,
        "message": message,
    }


def _port_conflict(wl: Workload, c: Container) -> int | None:
    mine = {p.get("containerPort") for p in c.ports}
    for other in wl.containers(init=False):
        if other.name == c.name:
            return None  # only containers before this one hold their ports already
        taken = mine & {p.get("containerPort") for p in other.ports}
        if taken:
            return min(int(p) for p in taken if isinstance(p, int))
    return None


def _liveness_crash(
    c: Container, catalog: ImageCatalog, notes: Mapping[str, str], key: tuple[object, ...]
) -> dict[str, Any] | None:
    probe = mapping(c.body.get("livenessProbe"))
    if not probe:
        return None
    failure = probe_failure(c, probe, catalog)
    startup = _float(notes.get(f"{ANNOTATION}startup-seconds-{c.name}")) or ids.between(
        1.0, 4.0, "startup", *key
    )
    budget = _probe_budget(probe) + _probe_budget(mapping(c.body.get("startupProbe")))
    if not failure and startup <= budget:
        return None
    kill_after = _probe_budget(probe) if failure else budget
    message = failure or _refused(probe)
    return {
        **_crash_with("Error", 137, kill_after, ""),
        "probe_failure": f"Liveness probe failed: {message}",
        "liveness_kill": True,
    }


def _probe_budget(probe: Mapping[str, Any]) -> float:
    if not probe:
        return 0.0
    delay = _int(probe.get("initialDelaySeconds"), 0)
    period = _int(probe.get("periodSeconds"), 10)
    threshold = _int(probe.get("failureThreshold"), 3)
    return float(delay + period * threshold)


def probe_port(probe: Mapping[str, Any]) -> int | str | None:
    for kind in ("httpGet", "tcpSocket", "grpc"):
        handler = mapping(probe.get(kind))
        if handler:
            port = handler.get("port")
            if isinstance(port, str) and port.isdigit():
                return int(port)
            return port if isinstance(port, int | str) else None
    return None


def probe_failure(c: Container, probe: Mapping[str, Any], catalog: ImageCatalog) -> str:
    """Why this probe can never succeed, or "" when it can.

    A port is served when the container declares it or the image served it in the
    baseline (health ports such as 13133 are often probed without being declared).
    """
    port = probe_port(probe)
    if port is None or catalog.serves(str(c.body.get("image", "")), port):
        return ""
    if isinstance(port, str) and not c.serves(port):
        return f"strconv.Atoi: parsing {port!r}: invalid syntax"
    if not c.ports:
        return ""
    return "" if c.serves(port) else _refused(probe)


def _refused(probe: Mapping[str, Any]) -> str:
    port = probe_port(probe)
    http = mapping(probe.get("httpGet"))
    if http:
        return f'Get "http://10.244.0.1:{port}{http.get("path", "/")}": connect: connection refused'
    return f"dial tcp 10.244.0.1:{port}: connect: connection refused"


def _readiness(
    wl: Workload, c: Container, catalog: ImageCatalog, base: ContainerFate
) -> ContainerFate:
    expected = catalog.expected_command(wl.obj.namespace, wl.obj.name, c.name)
    misbehaves = expected is not None and expected != command_of(c.body)
    probe = mapping(c.body.get("readinessProbe"))
    failure = probe_failure(c, probe, catalog) if probe else ""
    if failure:
        return _replace(
            base,
            {
                "ready_delay_s": None,
                "probe_failure": f"Readiness probe failed: {failure}",
                "misbehaves": misbehaves,
            },
        )
    delay = max(base.startup_s, float(_int(probe.get("initialDelaySeconds"), 0))) if probe else 0.0
    return _replace(base, {"ready_delay_s": delay, "misbehaves": misbehaves})


def _command_text(c: Container) -> str:
    """The init container's command line with its env references expanded."""
    text = " ".join(str(x) for x in as_list(c.body.get("command")) + as_list(c.body.get("args")))
    values = {str(e.get("name")): str(e.get("value", "")) for e in c.env}
    return _VAR.sub(lambda m: values.get(m[1] or m[2] or m[3], ""), text)


def _init_hang(c: Container, snapshot: Snapshot, ns: str) -> str:
    for host in _WAIT_TOOLS.findall(_command_text(c)):
        target = in_cluster_target(host.lower(), ns, snapshot.namespaces() | {ns})
        if target and not snapshot.has("Service", target[1], target[0]):
            return f"waiting for {host}: no such service"
    return ""


# -- helpers --------------------------------------------------------------------------


def _annotations(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping(value).items()}


def _template_annotations(wl: Workload) -> dict[str, str]:
    spec = wl.obj.spec
    if wl.obj.kind == "CronJob":
        spec = mapping(mapping(spec.get("jobTemplate")).get("spec"))
    meta = mapping(mapping(spec.get("template")).get("metadata"))
    return _annotations(meta.get("annotations"))


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
