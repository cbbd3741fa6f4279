"""Blame for findings only the live state shows: the latest recent change that can explain them.

Nothing in desired state can confirm the cause of a crash loop or an OOM kill, so
a commit is blamed only when its change *plausibly explains* the symptom. The
suspect is the most recent commit (within ``recent_s`` of the incident) that
changed the implicated part of the workload (the finding's container, else its
pod spec) in a field group that :data:`EXPLAINS` lists for the finding's symptom
class; only those changes are restored. A commit whose changes there explain
nothing (an env var added before an OOM kill) is passed over, never blamed, and
the walk goes on to older commits within the window. A finding whose symptom the
table does not classify (an alert, a learned rule) blames no commit at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gitmedic.bot.responder.bisect import POD_SPEC, Unit, restore_units
from gitmedic.bot.responder.leaves import changed_paths
from gitmedic.bot.responder.workspace import Fix, Workspace
from gitmedic.detectors.finding import Finding, Resource
from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.git import Commit
from gitmedic.reconciler.manifests.documents import EditError, same
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.paths import Match, Path, format_path, lookup, parse_path
from gitmedic.reconciler.manifests.rendered import NotEditable
from gitmedic.reconciler.manifests.values_behind import values_changed_by

MAX_COMMITS = 50  # how far back a field's last change is looked for (within the window)

# The symptom class of a live finding: (detector, rule), or (detector, "*") for any rule.
SYMPTOMS: Mapping[tuple[str, str], str] = {
    ("pod-crashloop", "oom-killed"): "oom",
    ("pod-crashloop", "crashloop"): "crash",
    ("pod-image-pull", "*"): "image",
    ("pod-config-error", "*"): "config",
    ("pod-unschedulable", "*"): "scheduling",
    ("pod-init-stuck", "*"): "init",
    ("deployment-unavailable", "*"): "unavailable",
    ("service-no-endpoints", "*"): "not-ready",
}

_RUNS = frozenset({"container", "container.image", "container.command", "container.args"})
# What a process needs to start and keep running: what runs (image, entrypoint, flags),
# its environment and files, its liveness checks, its limits and its sandbox.
_CRASH = _RUNS | frozenset(
    {
        *(f"container.{f}" for f in ("env", "envFrom", "volumeMounts", "livenessProbe")),
        *(f"container.{f}" for f in ("startupProbe", "resources", "securityContext", "ports")),
        "container.workingDir",
        *(f"pod.{f}" for f in ("volumes", "securityContext", "serviceAccountName", "containers")),
    }
)
# What the scheduler reads: requests, host ports, placement, volumes to attach.
_SCHEDULING = frozenset(
    {
        "container",
        "container.resources",
        "container.ports",
        *(f"pod.{f}" for f in ("nodeSelector", "affinity", "tolerations", "nodeName")),
        *(f"pod.{f}" for f in ("topologySpreadConstraints", "volumes", "priorityClassName")),
        "pod.runtimeClassName",
        "pod.hostNetwork",
    }
)

# Which field groups can explain which symptom class. A group is ``container.<field>``
# (of the implicated container, ``container`` alone: the whole container was added or
# replaced) or ``pod.<field>`` (of the pod spec). Why each:
EXPLAINS: Mapping[str, frozenset[str]] = {
    # Memory use is set by the limit and by what runs (image, entrypoint and flags). An env
    # var, a label or a probe does not make a process take more memory; a heap flag in an
    # env var cannot be told from a harmless one, so env is not blamed for an OOM kill.
    "oom": _RUNS | {"container.resources"},
    "crash": _CRASH,
    # A pull fails on the image reference, the pull policy or the registry credentials.
    "image": frozenset(
        {"container", "container.image", "container.imagePullPolicy", "pod.imagePullSecrets"}
    ),
    # The kubelet cannot create a container whose env, mounts, sandbox or entrypoint is bad.
    "config": frozenset(
        {
            "container",
            *(f"container.{f}" for f in ("env", "envFrom", "volumeMounts", "securityContext")),
            *(f"container.{f}" for f in ("command", "args", "image", "workingDir")),
            *(f"pod.{f}" for f in ("volumes", "securityContext", "serviceAccountName")),
        }
    ),
    "scheduling": _SCHEDULING,
    # An init container that never finishes: what it runs, waits for, or mounts.
    "init": _RUNS
    | {
        "container.env",
        "container.envFrom",
        "container.volumeMounts",
        "container.resources",
        "pod.volumes",
    },
    # Unavailable or never Ready: anything that crashes, does not schedule, or fails readiness.
    "unavailable": _CRASH | _SCHEDULING | {"container.readinessProbe"},
    "not-ready": _CRASH | {"container.readinessProbe"},
}


def symptom_of(finding: Finding) -> str | None:
    return SYMPTOMS.get((finding.detector, finding.rule)) or SYMPTOMS.get((finding.detector, "*"))


def field_group(obj: Obj, path: Path) -> str | None:
    """``container.<field>`` or ``pod.<field>`` for a path of ``obj``; None outside the pod spec."""
    pod = parse_path(POD_SPEC.get(obj.kind, "spec.template.spec"))
    if path[: len(pod)] != pod or len(path) == len(pod):
        return None
    rest = path[len(pod) :]
    if rest[0] in ("containers", "initContainers") and len(rest) >= 2:
        return "container" if len(rest) == 2 else f"container.{rest[2]}"
    return f"pod.{rest[0]}"


def explains(symptom: str, obj: Obj, path: Path) -> bool:
    group = field_group(obj, path)
    return group is not None and group in EXPLAINS.get(symptom, frozenset())


def recent_regression(ws: Workspace, finding: Finding, since: float, limit: int) -> Fix | None:
    """Undo the latest recent change to the implicated part of the workload that can
    explain the finding's symptom (module doc)."""
    ref, symptom = finding.resource, symptom_of(finding)
    if symptom is None or ws.file_of(ref) is None:
        return None
    for commit in ws.states.commits(limit):
        if commit.timestamp < since or not commit.parents:
            return None
        old = ws.states.at(commit.parents[0]).get(ref.kind, ref.namespace, ref.name)
        new = ws.states.at(commit.sha).get(ref.kind, ref.namespace, ref.name)
        if old is None or new is None:
            continue
        area = _area(new, finding)
        changed = [p for p in changed_paths(old.body, new.body) if p[: len(area)] == area]
        paths = [p for p in changed if explains(symptom, new, p)]
        if not paths:
            continue  # nothing it changed there explains the symptom: not this commit
        steered = ""
        try:
            edits, contents = restore_units(ws, [Unit(ref, p) for p in paths], commit.parents[0])
        except NotEditable:  # a template writes it: the values the commit changed, if they
            edits, contents = _values_behind(ws, new, old, paths, commit)
            files = ", ".join(dict.fromkeys(e.file for e in edits))
            steered = f" (the template writes it as values ask: its change to {files} undone)"
        except EditError:
            return None
        if not edits:
            return None
        what = ", ".join(format_path(p) for p in paths) + steered
        kept = [format_path(p) for p in changed if p not in paths]
        text = (
            f"{finding.summary} ({finding.detector}, seen live: {symptom}). The latest change "
            f'that can explain it, {commit.sha[:12]} "{commit.subject}" ({commit.author}), '
            f"changed {what}; restored to its parent."
        )
        if kept:
            text += f" Its changes that cannot explain {symptom} are kept: {', '.join(kept)}."
        return Fix("bisect", tuple(edits), contents, text, commit=commit)
    return None


def _values_behind(
    ws: Workspace, new: Obj, old: Obj, paths: list[Path], commit: Commit
) -> tuple[list[Edit], dict[str, str]]:
    """The commit's changes to the chart's values files, undone, when rendering with them
    undone brings every field back as the parent had it (a template writes the field
    only when a value asks: ``{{ if .Values.x }}``); else no edit."""
    try:
        edits = values_changed_by(ws.overlay(), new, paths[0], commit.sha, commit.parents[0])
        contents = ws.applied(edits, {})
    except EditError:
        return [], {}
    after = ws.states.with_files(ws.head, contents).get(new.kind, new.namespace, new.name)
    if not edits or after is None:
        return [], {}
    back = all(_same_at(after.body, old.body, p) for p in paths)
    return (edits, contents) if back else ([], {})


def _same_at(a: Mapping[str, Any], b: Mapping[str, Any], path: Path) -> bool:
    (found_a, value_a), (found_b, value_b) = lookup(a, path), lookup(b, path)
    return found_a == found_b and same(value_a, value_b)


def last_change_of(
    ws: Workspace, ref: Resource, path: Path, since: float, *, introduction: bool = True
) -> Commit | None:
    """The latest commit since ``since`` that changed ``path`` of ``ref``, or None.

    Judged on the rendered desired state of each commit and its parent, so a change made
    where the field is really set (an overlay's patch, a Helm values file, a shared base)
    counts as much as one in the file that declares the object, and a commit that only
    moved the object to another file or rewrote its text (key order, quoting) never does.
    The walk covers the app's paths and the files declaring ``ref`` and setting ``path``
    (either may live outside the app's folder). ``introduction``: whether the commit that
    first brought the object counts (a restore can put back what was before it; a lever
    asks whether something that *ran* was changed, and the object's arrival is not that).
    """
    states = ws.states
    files = sorted({f for f in (ws.file_of(ref), ws.file_of(ref, path=path)) if f})
    for commit in states.commits(MAX_COMMITS, also=files):  # newest first
        if commit.timestamp < since or not commit.parents:
            return None
        new = states.at(commit.sha).get(ref.kind, ref.namespace, ref.name)
        old = states.at(commit.parents[0]).get(ref.kind, ref.namespace, ref.name)
        if new is None or (old is None and not introduction):
            continue
        now, was = lookup(new.body, path), lookup(old.body, path) if old else (False, None)
        if now[0] != was[0] or not same(now[1], was[1]):
            return commit
    return None


def _area(obj: Obj, finding: Finding) -> Path:
    """The part of a workload a live finding implicates: its container, or its pod spec."""
    pod = parse_path(POD_SPEC.get(obj.kind, "spec.template.spec"))
    container = finding.params.get("container")
    if not isinstance(container, str):
        return pod
    spec = obj.body
    for seg in pod:
        spec = spec.get(seg, {}) if isinstance(spec, dict) else {}
    for field in ("containers", "initContainers"):
        items = spec.get(field) if isinstance(spec, dict) else None
        if isinstance(items, list) and any(
            isinstance(c, dict) and c.get("name") == container for c in items
        ):
            return (*pod, field, Match("name", container))
    return pod
