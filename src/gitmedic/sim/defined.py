"""Which Secrets and ConfigMaps the repository ever defined: the rest are made at runtime.

An app often references a Secret no manifest holds: a Helm hook Job writes it
(envoy-gateway's certgen), an operator does (sealed-secrets, external-secrets,
cert-manager), or a person ran ``kubectl create secret``. The sim renders without
hooks and runs no operator, so taking every absent Secret as missing invented a
critical incident on an untouched repository. The rule follows the image registry
(:mod:`gitmedic.sim.registry`): what ran before is what exists. An absent object
that the baseline (the revisions taken as having run) already referenced and that
no commit of the repository ever defined exists, made by something the sim does
not run, and has every key asked of it. One that some revision defined and the
current one lacks (deleted, renamed: the fault library's shape) is missing, and so
is one only the change under judgement references (a commit that reads a Secret
nobody made).

"Defined" is read two ways: raw, from every manifest-like file version reachable
from the deployed commit (``kind: Secret``/``ConfigMap`` documents, kustomize
``secretGenerator``/``configMapGenerator`` entries), whatever path it sits in;
and rendered, from the snapshots of earlier revisions the sim already loaded (a
chart's templated name). Outside git nothing is known and every absent object is
missing, as before. The scan runs only when an absent object is referenced, once
per commit and process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import yaml

from gitmedic.detectors.snapshot import Snapshot, as_list, mapping
from gitmedic.reconciler import gitcmd
from gitmedic.reconciler.manifests.tree import git_toplevel
from gitmedic.sim.registry import reachable_blobs, read_blobs

KINDS = ("Secret", "ConfigMap")
_GENERATORS = {"secretGenerator": "Secret", "configMapGenerator": "ConfigMap"}
# a file version that cannot define one is not parsed (most of a repository's history)
_MENTIONS = re.compile(rb"Secret|ConfigMap|secretGenerator|configMapGenerator")
_REFS = {
    "secretKeyRef": "Secret",
    "configMapKeyRef": "ConfigMap",
    "secretRef": "Secret",
    "configMapRef": "ConfigMap",
}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Name = tuple[str, str]  # (kind, name)


@dataclass(frozen=True)
class DefinedObjects:
    """The Secrets and ConfigMaps some revision defined, by (kind, name) in any namespace:
    a namespace is often set by an overlay or a Flux Kustomization the raw file lacks."""

    where: Path | None = None  # the repository read lazily; None: nothing is known
    head: str = ""  # the commit deployed: its history is read
    rendered: frozenset[Name] = frozenset()  # defined by a baseline's render
    referenced: frozenset[Name] = frozenset()  # referenced by a baseline's workloads

    def made_at_runtime(self, kind: str, name: str) -> bool:
        """Is ``kind/name``, absent from the desired state, made by something outside the
        repository (referenced by what ran, never defined by any revision), so a pod
        finds it?"""
        if self.where is None or (kind, name) not in self.referenced:
            return False
        if (kind, name) in self.rendered:
            return False
        return (kind, name) not in defined_in_history(self.where, self.head)

    def with_baseline(self, snapshots: Iterable[Snapshot]) -> DefinedObjects:
        """What these baseline snapshots (taken as having run) define and reference."""
        rendered, referenced = set(self.rendered), set(self.referenced)
        for snap in snapshots:
            rendered |= {(o.kind, o.name) for o in snap if o.kind in KINDS}
            referenced |= references(snap)
        return replace(self, rendered=frozenset(rendered), referenced=frozenset(referenced))

    def at_head(self, head: str) -> DefinedObjects:
        """As of ``head`` (a newly deployed commit); itself when ``head`` names none."""
        if self.where is None:
            return self
        tip = _commit(self.where, head)
        return replace(self, head=tip) if tip and tip != self.head else self


def defined_objects(where: Path, head: str | None) -> DefinedObjects:
    """What the repository at ``where`` defined up to ``head``; outside git, nothing known."""
    tip = _commit(where, head or "HEAD")
    if not tip:
        return DefinedObjects()
    root = git_toplevel(where)
    return DefinedObjects(root.resolve() if root else where.resolve(), tip)


@lru_cache(maxsize=32)
def defined_in_history(where: Path, head: str) -> frozenset[Name]:
    out: set[Name] = set()
    for _, text in read_blobs(where, reachable_blobs(where, (head,)), _MENTIONS):
        out |= definitions(text)
    return frozenset(out)


def definitions(text: str) -> set[Name]:
    """(kind, name) of each Secret and ConfigMap one file defines or generates. A file
    that is not YAML (a chart template) defines none that can be read raw; its rendered
    form is what :meth:`DefinedObjects.with_baseline` adds."""
    try:
        docs = list(yaml.load_all(text, Loader=_LOADER))
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        return set()
    out: set[Name] = set()
    for doc in docs:
        for item in _documents(doc):
            out |= _defined_by(item)
    return out


def references(snap: Snapshot) -> set[Name]:
    """(kind, name) of each Secret and ConfigMap a workload of ``snap`` reads: a volume
    (projected ones too), an env var's key, an ``envFrom``."""
    out: set[Name] = set()
    for wl in snap.workloads():
        for vol in as_list(wl.pod_spec.get("volumes")):
            vol = mapping(vol)
            projected = as_list(mapping(vol.get("projected")).get("sources"))
            for src in [vol, *(mapping(s) for s in projected)]:
                secret, config = mapping(src.get("secret")), mapping(src.get("configMap"))
                if secret:
                    out.add(("Secret", str(secret.get("secretName") or secret.get("name"))))
                if config:
                    out.add(("ConfigMap", str(config.get("name"))))
        for c in wl.containers():
            refs = [mapping(mapping(e.get("valueFrom"))) for e in c.env]
            refs += [mapping(s) for s in as_list(c.body.get("envFrom"))]
            for ref in refs:
                for field, kind in _REFS.items():
                    if mapping(ref.get(field)):
                        out.add((kind, str(mapping(ref.get(field)).get("name"))))
    return out


def _documents(doc: object) -> list[Mapping[object, object]]:
    """A document, or the items of a ``kind: List``."""
    if not isinstance(doc, Mapping):
        return []
    items = doc.get("items")
    if str(doc.get("kind", "")).endswith("List") and isinstance(items, list):
        return [doc, *(i for i in items if isinstance(i, Mapping))]
    return [doc]


def _defined_by(doc: Mapping[object, object]) -> set[Name]:
    out: set[Name] = set()
    kind, meta = doc.get("kind"), doc.get("metadata")
    if kind in KINDS and isinstance(meta, Mapping) and isinstance(meta.get("name"), str):
        out.add((str(kind), str(meta["name"])))
    for field, made in _GENERATORS.items():
        entries = doc.get(field)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                out.add((made, str(entry["name"])))
    return out


def _commit(where: Path, rev: str) -> str:
    proc = gitcmd.run(where, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    return proc.stdout.strip() if proc.returncode == 0 else ""
