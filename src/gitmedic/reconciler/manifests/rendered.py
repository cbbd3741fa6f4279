"""Restoring a rendered object's fields where they are written: values keys, patches, files.

A Helm chart's field that a value feeds is restored by putting *that key* of
the values file that sets it (the last in helm's order) back as it was at the
good revision: an edit to the values file, minimal and byte-exact like any
other (its document is addressed as :func:`~.documents.values_ref`). A field
built from several keys (``{{ .repository }}:{{ .tag }}``) restores each of
them; keys that did not change give no edit. A field written in the template
itself is no value: changing the chart is a person's call, so it is refused
with :class:`NotEditable`, naming the template.

A kustomize field is restored in the patch that sets it, else in the resource
file (:func:`~.targets.edit_target`); a field only a generator or transformer
produces (no resource file declares the object as rendered) is refused with
the kustomization named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmedic.detectors.finding import Resource
from gitmedic.detectors.finding_field import finding_path
from gitmedic.detectors.origin import FieldOrigin, origin_of
from gitmedic.detectors.snapshot import Obj
from gitmedic.reconciler.manifests.documents import EditError, same, values_ref
from gitmedic.reconciler.manifests.edit import Edit
from gitmedic.reconciler.manifests.environments import other_environments
from gitmedic.reconciler.manifests.history import restore_fields
from gitmedic.reconciler.manifests.kustomize_images import image_entry
from gitmedic.reconciler.manifests.parse import parse_text
from gitmedic.reconciler.manifests.paths import (
    Match,
    Path,
    PathError,
    format_path,
    lookup,
    parse_path,
)
from gitmedic.reconciler.manifests.repo import ManifestRepo
from gitmedic.reconciler.manifests.targets import edit_target, indexed

__all__ = [
    "NotEditable",
    "Target",
    "field_targets",
    "not_editable",
    "own_environment",
    "restore_rendered",
]


class NotEditable(EditError):
    """A rendered field no source file sets as a value; the message says where it comes from."""


@dataclass(frozen=True)
class Target:
    """Where one rendered field is edited: a file, the object in it, the path there."""

    file: str
    resource: Resource
    path: Path


def field_targets(obj: Obj, path: Path) -> list[Target]:
    """The edits' addresses for ``path`` of ``obj`` (several for a field built of keys)."""
    src = obj.source
    if src is None:
        raise EditError(f"{obj.ref} is declared in no file")
    if src.renderer == "helm":
        return _values_targets(obj, path)
    file = edit_target(obj, path) or src.file
    if src.renderer == "kustomize" and file == src.render_root:
        raise NotEditable(
            f"{format_path(path)} of {obj.ref} is produced by {src.render_root} (a generator "
            "or transformer: namePrefix, nameSuffix, commonLabels, images, replicas, "
            "configMapGenerator...), not by a resource or patch file; change it there by hand"
        )
    # a patch naming the object before a namePrefix or nameSuffix is addressed by that name
    origin = origin_of(src.origins, format_path(indexed(obj.body, path)))
    holder = origin.holder if origin is not None and origin.file == file else None
    return [Target(file, holder or obj.ref, path)]


def _values_targets(obj: Obj, path: Path) -> list[Target]:
    assert obj.source is not None
    origins = feeding(obj.source.origins, format_path(indexed(obj.body, path)))
    if not origins and obj.source.file == obj.source.render_root:  # a chart from a repository
        raise NotEditable(
            f"{format_path(path)} of {obj.ref} comes from the chart that {obj.source.file} "
            "pulls from a repository (its default values or a template), not from a value "
            "in this repository; set it in the release's values by hand"
        )
    if not origins:
        raise NotEditable(
            f"{format_path(path)} of {obj.ref} is written in the chart's template "
            f"{obj.source.file}, not set from a value; gitmedic edits values files only "
            "(change the template by hand, or template the field from a value)"
        )
    out: list[Target] = []
    for o in origins:
        target = _values_target(o, obj, path)
        if target not in out:
            out.append(target)
    return out


def _values_target(o: FieldOrigin, obj: Obj, path: Path) -> Target:
    keys = o.keys or tuple(o.key.split("."))
    if o.holder is None:
        return Target(o.file, values_ref(o.file), keys)
    if not o.editable:
        raise NotEditable(
            f"{format_path(path)} of {obj.ref} is set by {o.key} in the values string "
            f"{'.'.join(o.prefix)} of {o.holder.kind} {o.holder.name} ({o.file}:{o.line}); "
            "gitmedic does not edit YAML inside a string: change it by hand"
        )
    if o.parameter:  # restored as the whole list item, so one added by the fault goes
        return Target(o.file, o.holder, (*o.prefix, Match("name", o.parameter)))
    return Target(o.file, o.holder, (*o.prefix, *keys))


def feeding(origins: Sequence[FieldOrigin], path: str) -> list[FieldOrigin]:
    """Every origin of the field itself, else of the fields below it, else the nearest
    above it (a whole map rendered from one key by ``toYaml``)."""
    exact = [o for o in origins if o.path == path]
    if exact:
        return exact
    below = [o for o in origins if _within(o.path, path)]
    if below:
        return below
    above = [o for o in origins if _within(path, o.path)]
    longest = max((len(o.path) for o in above), default=0)
    return [o for o in above if len(o.path) == longest]


def _within(inner: str, outer: str) -> bool:
    return inner.startswith(outer) and inner[len(outer) : len(outer) + 1] in (".", "[")


def restore_rendered(
    repo: ManifestRepo,
    obj: Obj,
    paths: Sequence[Path],
    rev: str,
    moved: Mapping[str, str] | None = None,
) -> list[Edit]:
    """Edits putting ``paths`` of the rendered ``obj`` back as their sources had them at ``rev``
    (read, for a file in ``moved``, from the file it was then).

    Edits are grouped per file and object and computed in order; apply them in order.
    """
    groups: dict[tuple[str, Resource], list[Path]] = {}
    fields: dict[str, list[Path]] = {}  # file -> the rendered fields it is a target for
    for path in paths:
        for t in _declared(repo, obj, field_targets(obj, path)):
            wanted = groups.setdefault((t.file, t.resource), [])
            if t.path not in wanted:
                wanted.append(t.path)
            fields.setdefault(t.file, []).append(path)
    edits: list[Edit] = []
    for (file, resource), wanted in groups.items():
        edits += restore_fields(repo, resource, wanted, rev, file, (moved or {}).get(file))
    # only a file the fix edits can change another environment: a field built of several
    # keys (repository:tag) has a target for each, and a key that stays gives no edit
    for file in dict.fromkeys(e.file for e in edits):
        for path in fields.get(file, []):
            own_environment(repo, obj, path, [file])
    return edits


def _targets(repo: ManifestRepo, obj: Obj, path: Path) -> list[Target]:
    targets = _declared(repo, obj, field_targets(obj, path))
    own_environment(repo, obj, path, [t.file for t in targets])
    return targets


def own_environment(repo: ManifestRepo, obj: Obj, path: Path, files: Sequence[str]) -> None:
    """Refuses an edit of ``files`` that another environment renders ``path`` from, unless
    it has the same value there."""
    head = repo.git.rev_parse("HEAD")
    others = other_environments(repo.root, repo.path, repo.namespace, head, repo.deployer)
    if _in_own_release(repo, obj, path):  # the other releases of its file render none of it
        others = [e for e in others if not e.deployer or e.deployer == repo.deployer]
    for file in files:
        differ = sorted(e.name for e in others if file in e.files and e.differs(obj, path))
        if differ:
            raise NotEditable(
                f"{file} is also rendered into {', '.join(differ)}, where "
                f"{format_path(path)} of {obj.kind} {obj.ref.name} is not the same: a fix for "
                "this environment must not change them; fix it in its own overlay patch or "
                "values file"
            )


def _in_own_release(repo: ManifestRepo, obj: Obj, path: Path) -> bool:
    """Is ``path`` of ``obj`` set by the values of the app's own release (its HelmRelease's or
    Application's inline values)? Then an edit there changes that release's render alone,
    though other releases are declared in the same file (gitops-istio's three)."""
    if not repo.deployer or obj.source is None:
        return False
    origin = origin_of(obj.source.origins, format_path(indexed(obj.body, path)))
    holder = origin.holder if origin is not None else None
    return (
        holder is not None
        and holder.kind in ("HelmRelease", "Application")
        and holder.name == repo.deployer
    )


def _declared(repo: ManifestRepo, obj: Obj, targets: list[Target]) -> list[Target]:
    """Kustomize targets in the resource file, addressed as the file declares the object
    (before a namePrefix or a namespace); a field whose rendered value the file does not
    hold was made by a transformer, and is refused with the kustomization named."""
    src = obj.source
    if src is None or src.renderer != "kustomize":
        return targets
    out = []
    for t in targets:
        if t.file != src.file or edit_target(obj, t.path) != src.file:
            out.append(t)  # a patch sets it: the patch declares the rendered object
            continue
        declared = _document(repo, src.file, src.document)
        rendered = lookup(obj.body, t.path)
        if declared is None or not _same_found(lookup(declared, t.path), rendered):
            entry = _images_entry(repo, src.render_root, declared, t.path)
            if entry is not None:  # a release bumped the kustomization's images: there
                out.append(entry)
                continue
            raise NotEditable(
                f"{format_path(t.path)} of {obj.ref} is set by a transformer of "
                f"{src.render_root} (images, replicas, namePrefix, commonLabels, labels, "
                f"namespace...), not as {src.file} declares it; change it there by hand"
            )
        out.append(Target(t.file, _identity(declared, obj.ref), t.path))
    return out


def _images_entry(
    repo: ManifestRepo, kustomization: str, declared: dict[str, Any] | None, path: Path
) -> Target | None:
    """The ``images:`` entry of the kustomization that sets a container's image."""
    if declared is None or not path or path[-1] != "image":
        return None
    found, image = lookup(declared, path)
    if not found or not isinstance(image, str) or not repo.exists(kustomization):
        return None
    entry = image_entry(repo.read(kustomization), image)
    return Target(kustomization, values_ref(kustomization), entry) if entry else None


def _document(repo: ManifestRepo, file: str, document: int) -> dict[str, Any] | None:
    parsed = parse_text(repo.read(file), file)
    return next((p.body for p in parsed.objects if p.document == document), None)


def _same_found(a: tuple[bool, Any], b: tuple[bool, Any]) -> bool:
    return a[0] == b[0] and same(a[1], b[1])


def _identity(declared: dict[str, Any], rendered: Resource) -> Resource:
    meta = declared.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = str(meta.get("name") or rendered.name)
    namespace = str(meta.get("namespace") or "")
    return Resource(rendered.kind, namespace, name, rendered.api_version)


def not_editable(repo: ManifestRepo, obj: Obj | None, params: Mapping[str, Any]) -> str | None:
    """Why the field a finding names cannot be fixed by an edit (a template, a
    transformer, a values string), or None when it can or no field is named."""
    if obj is None or obj.source is None or not obj.source.renderer:
        return None
    text = finding_path(obj, params)
    try:
        path = parse_path(text) if text else None
        if path:
            _targets(repo, obj, path)
    except NotEditable as exc:
        return str(exc)
    except (EditError, PathError):
        return None
    return None
