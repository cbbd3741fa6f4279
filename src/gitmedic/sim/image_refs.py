"""The image references one file names, read the way each tool that deploys it would.

A registry entry is a full reference (``nginx:1.27``, ``repo@sha256:...``), but a
repository spells images in several shapes, and :func:`references` reads them all
without rendering anything:

- a container's ``image:`` string (plain manifests, a chart's literal images);
- a Helm values map ``{registry?, repository, tag?, digest?}`` under any key
  (``image:``, ``redis:``): its repository and tag may sit in different files (the
  chart's ``values.yaml`` names the repository, ``values-prod.yaml`` overrides the
  tag), so they are kept apart, by the key that holds them (:class:`Parts`), and a
  repository takes any tag of its keys when an image is looked up, never multiplied
  out (a monorepo's charts would make millions); an empty tag defaults to a chart's
  ``appVersion``;
- an Argo CD ``helm.parameters`` item ``{name: redis.tag, value: 8.8.0}``;
- kustomize ``images:`` entries ``{name, newName?, newTag?, digest?}`` (a
  kustomization, a Flux Kustomization's ``spec.images``) and Argo CD's
  ``kustomize.images`` strings (``name=newName:tag``).

A file that is not YAML (a chart template) is read line by line for ``image:``
values. Templated strings (``{{ ... }}``, ``${VAR}``) name no image and are skipped.
Pairing by key is deliberately generous: the registry must never miss an image a
commit named, and a pairing that names an image nobody pushed only makes the sim
more lenient, never invent a fault.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

MAX_NODES = 200_000  # a file's YAML nodes walked at most (aliases can multiply a tree)
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
_IMAGE_LINE = re.compile(r"""^\s*(?:-\s+)?["']?image["']?\s*:\s*["']?([^\s"'#{}$]+)""", re.M)
_SCALAR = (str, int, float)


def plausible(ref: str) -> bool:
    """Could ``ref`` be an image reference (not a template, not prose)?"""
    return 0 < len(ref) <= 512 and bool(_REF.match(ref)) and not ref.endswith((":", "/", "@"))


@dataclass
class Parts:
    """What one or more files name, before repositories and tags are paired."""

    full: set[str] = field(default_factory=set)
    repositories: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    tags: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    untagged: set[str] = field(default_factory=set)  # keys whose map had no tag
    app_versions: set[str] = field(default_factory=set)
    renames: set[tuple[str, str]] = field(default_factory=set)  # kustomize name -> newName

    def merge(self, other: Parts) -> None:
        self.full |= other.full
        for key, repos in other.repositories.items():
            self.repositories[key] |= repos
        for key, tags in other.tags.items():
            self.tags[key] |= tags
        self.untagged |= other.untagged
        self.app_versions |= other.app_versions
        self.renames |= other.renames

    def references(self) -> set[str]:
        """The full references named, each kustomize rename applied to them too."""
        out = {ref for ref in self.full if plausible(ref)}
        for old, new in self.renames:
            out |= {new + ref[len(old) :] for ref in list(out) if _same_repository(ref, old)}
        return out

    def tags_by_key(self) -> dict[str, set[str]]:
        """The tags each key's repositories may take: those named under that key, and
        where a map named no tag, what a chart's template defaults it to."""
        out = {key: set(self.tags.get(key, ())) for key in self.repositories}
        for key, tags in out.items():
            if key in self.untagged or not tags:
                tags |= self.app_versions | {"latest"}
        return out

    def repository_keys(self) -> dict[str, set[str]]:
        """Each repository named in a values map -> the keys it was named under (a
        kustomize rename of it, under the same keys)."""
        out: dict[str, set[str]] = defaultdict(set)
        for key, repos in self.repositories.items():
            for repo in repos:
                out[repo].add(key)
        for old, new in self.renames:
            if old in out:
                out[new] |= out[old]
        return dict(out)


def references(name: str, text: str) -> Parts:
    """What the file ``name`` (a repo path) with contents ``text`` names."""
    parts = Parts()
    try:
        docs = list(yaml.load_all(text, Loader=_LOADER))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        parts.full |= {m for m in _IMAGE_LINE.findall(text) if plausible(m)}
        return parts
    for doc in docs:
        if name.rsplit("/", 1)[-1] == "Chart.yaml" and isinstance(doc, Mapping):
            version = doc.get("appVersion")
            if isinstance(version, _SCALAR) and str(version):
                parts.app_versions.add(str(version))
        _walk(doc, parts)
    return parts


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _walk(doc: object, parts: Parts) -> None:
    seen: set[int] = set()
    todo: list[tuple[str, object]] = [("", doc)]
    while todo and len(seen) < MAX_NODES:
        key, node = todo.pop()
        if id(node) in seen:
            continue
        if isinstance(node, Mapping):
            seen.add(id(node))
            _mapping(key, node, parts)
            todo.extend((str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            seen.add(id(node))
            if key == "images":
                _kustomize_images(node, parts)
            todo.extend((key, item) for item in node)


def _mapping(key: str, node: Mapping[object, object], parts: Parts) -> None:
    image = node.get("image")
    if isinstance(image, str) and plausible(image.strip()):
        parts.full.add(image.strip())
    _values_map(key, node, parts)
    _helm_parameter(node, parts)


def _values_map(key: str, node: Mapping[object, object], parts: Parts) -> None:
    """``{registry?, repository, tag?, digest?}``; a map of a tag alone overrides one
    (``image: {tag: 6.14.2}`` in an environment's values file)."""
    tag = node.get("tag")
    tagged = isinstance(tag, _SCALAR) and bool(str(tag).strip())
    if tagged:
        parts.tags[key].add(str(tag).strip())
    repo = node.get("repository")
    if not isinstance(repo, str) or not plausible(repo.strip()):
        return
    repos = {repo.strip()}
    registry = node.get("registry")
    if isinstance(registry, str) and registry.strip():
        repos.add(f"{registry.strip().rstrip('/')}/{repo.strip()}")
    parts.repositories[key] |= repos
    if not tagged:  # the chart's template defaults it (its appVersion, or latest)
        parts.untagged.add(key)
    digest = node.get("digest")
    if isinstance(digest, str) and digest.strip():
        parts.full |= {f"{r}@{digest.strip()}" for r in repos}


def _helm_parameter(node: Mapping[object, object], parts: Parts) -> None:
    """An Argo CD ``helm.parameters`` item: ``{name: redis.tag, value: 8.8.0}``."""
    name, value = node.get("name"), node.get("value")
    if not isinstance(name, str) or not isinstance(value, _SCALAR) or "." not in name:
        return
    holder, _, leaf = name.rpartition(".")
    key = holder.rsplit(".", 1)[-1]
    if leaf == "repository" and isinstance(value, str) and plausible(value):
        parts.repositories[key].add(value)
    elif leaf == "tag" and str(value).strip():
        parts.tags[key].add(str(value).strip())
    elif leaf == "image" and isinstance(value, str) and plausible(value):
        parts.full.add(value)


def _kustomize_images(entries: list[object], parts: Parts) -> None:
    for entry in entries:
        if isinstance(entry, str):
            _argo_image(entry.strip(), parts)
        elif isinstance(entry, Mapping):
            _kustomize_entry(entry, parts)


def _kustomize_entry(entry: Mapping[object, object], parts: Parts) -> None:
    name, new_name = entry.get("name"), entry.get("newName")
    if not isinstance(name, str) or not name.strip():
        return
    target = new_name.strip() if isinstance(new_name, str) and new_name.strip() else name.strip()
    tag, digest = entry.get("newTag"), entry.get("digest")
    if isinstance(tag, _SCALAR) and str(tag).strip():
        parts.full.add(f"{target}:{str(tag).strip()}")
    if isinstance(digest, str) and digest.strip():
        parts.full.add(f"{target}@{digest.strip()}")
    if target != name.strip():
        parts.renames.add((name.strip(), target))


def _argo_image(spec: str, parts: Parts) -> None:
    """``name=newName:tag``, ``name=newName``, ``name:tag`` (Argo CD ``kustomize.images``)."""
    old, eq, new = spec.partition("=")
    ref = new if eq else old
    if plausible(ref):
        parts.full.add(ref)
    if eq and plausible(old):
        parts.renames.add((old, _repository_of(new)))


def _repository_of(ref: str) -> str:
    ref = ref.split("@", 1)[0]
    head, colon, tag = ref.rpartition(":")
    return head if colon and "/" not in tag else ref


def _same_repository(ref: str, repo: str) -> bool:
    return _repository_of(ref) == repo
