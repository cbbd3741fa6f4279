"""Benign changes: commits that must produce no finding and no pull request.

Scale 1 -> 2, a new label, an image bump to a tag that ran before, a comment:
the shapes FAULTS.md lists, each as small as a human would write it. Three more
change the pod template, so each starts a rollout whose new pods take their
start-up time (minutes for sock-shop's and train-ticket's JVMs) to become Ready:
a pod label, a pod annotation, and a new env var the app does not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmedic.detectors.snapshot import Snapshot
from gitmedic.sim.faults import edit as ed
from gitmedic.sim.faults.targets import Injection, workload


def scale_up(root: Path, snap: Snapshot, target: str | None = None, replicas: int = 2) -> Injection:
    wl = workload(snap, target)
    ed.edit(root, wl.obj, lambda doc: doc["spec"].__setitem__("replicas", replicas))
    return Injection("scale-up", wl.ref, f"replicas {wl.replicas} -> {replicas}")


def new_label(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)
    ed.edit(
        root,
        wl.obj,
        lambda doc: doc["metadata"].setdefault("labels", {}).__setitem__("team", "checkout"),
    )
    return Injection("new-label", wl.ref, "label team=checkout")


def image_bump_known(
    root: Path, snap: Snapshot, target: str | None = None, image: str | None = None
) -> Injection:
    """Move a workload to another image that ran before (``image``, from the baseline history)."""
    wl = workload(snap, target)
    old = str(wl.containers(init=False)[0].body.get("image"))
    if image is None:
        raise ed.FaultNotApplicable("name the earlier image to bump to (image=...)")
    ed.edit(root, wl.obj, lambda doc: ed.containers(doc)[0].__setitem__("image", image))
    return Injection("image-bump", wl.ref, f"image {old} -> {image}")


def comment(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        doc.yaml_set_start_comment("reviewed by the on-call team")

    ed.edit(root, wl.obj, change)
    return Injection("comment", wl.ref, "a comment line")


def _template_entry(
    root: Path, snap: Snapshot, target: str | None, section: str, key: str, value: str
) -> Injection:
    """One new entry in the pod template's ``labels`` or ``annotations``: a rollout."""
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        meta = doc["spec"]["template"].setdefault("metadata", {})
        meta.setdefault(section, {})[key] = value

    ed.edit(root, wl.obj, change)
    kind = "pod-label" if section == "labels" else "pod-annotation"
    return Injection(kind, wl.ref, f"pod template {section} {key}={value}")


def pod_label(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    return _template_entry(root, snap, target, "labels", "release-train", "2026-12")


def pod_annotation(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    return _template_entry(root, snap, target, "annotations", "example.com/owner", "checkout")


def env_added(root: Path, snap: Snapshot, target: str | None = None) -> Injection:
    wl = workload(snap, target)

    def change(doc: Any) -> None:
        first = ed.containers(doc)[0]
        first.setdefault("env", []).append({"name": "LOG_FORMAT", "value": "json"})

    ed.edit(root, wl.obj, change)
    return Injection("env-added", wl.ref, "env LOG_FORMAT=json on the first container")
