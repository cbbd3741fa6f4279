"""Flux's post-build variable substitution, as kustomize-controller applies it.

A Flux ``Kustomization`` with ``spec.postBuild`` has its objects' ``${var}`` replaced
after ``kustomize build`` (fluxcd/pkg ``kustomize`` varsub): the variables of
``substituteFrom`` (ConfigMaps and Secrets, in list order, later keys winning) then the
inline ``substitute`` (winning over all). gitmedic reads the files a Kustomization
deploys with those values in, so a HelmRelease's ``version: "${version}"`` is the
version Flux installs, not a chart named ``${version}``.

Flux's rules kept here:

- syntax ``${var}``, ``${var:=default}``, ``${var:-default}`` (default when unset or
  empty), ``${var=default}``, ``${var-default}`` (default when unset); ``$${var}`` is the
  literal ``${var}``; a name must match ``[_a-zA-Z][_a-zA-Z0-9]*``;
- newlines are removed from values (so a substituted line stays one line, and every
  field keeps its file and line);
- an object labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled``
  is left as written; with no variable at all nothing is substituted;
- a variable with no value and no default becomes '' (Flux's default, non-strict mode).

The sources are looked up among the repository's own objects, in the Kustomization's
namespace (where Flux reads them), the one nearest the Kustomization's file when
several clusters declare one of the same name. A source gitmedic cannot read (a Secret
kept outside the repository, a SOPS-encrypted one, a non-optional ConfigMap the
repository does not hold) leaves its variables *unknown*: then nothing that could come
from it is replaced, ``${var}`` stays as written and :attr:`Substituted.notes` says
which Kustomization, source and variables (a guess would be a false finding).

The substitution is done on each document's text, line for line, so the loader, the
chart renderer and the deployer readers all see what Flux applies, at the lines the
team wrote. A kustomize root's build output is substituted as Flux does it (kustomize
drops the quotes of ``"${n}"``, so ``n: "1"`` becomes the number 1, as in Flux); a file
Flux builds without a kustomization of its own is substituted as written, quotes kept:
there a number Flux would apply as a number stays the string written (never a finding
Flux would not have, at worst one missed).
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gitmedic.reconciler.manifests.parse import ManifestError
from gitmedic.reconciler.manifests.tree import FsTree, GitTree, LoadFailure, Tree
from gitmedic.reconciler.manifests.variants import Part

__all__ = [
    "DISABLED",
    "PostBuild",
    "SubstitutedTree",
    "envsubst",
    "flux_built",
    "post_builds",
    "substitute_documents",
    "substituted_reader",
    "substituted_tree",
    "unknown_variables",
]

DISABLED = "kustomize.toolkit.fluxcd.io/substitute"
_KUSTOMIZE = ("kustomize.toolkit.fluxcd.io", "Kustomization")
_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
# ``$${...}`` (escaped) or ``${...}``; Flux's defaults hold no braces in practice
_EXPR = re.compile(r"(\$?)\$\{([^{}]*)\}")
_FORM = re.compile(r"([_A-Za-z][_A-Za-z0-9]*)(?:(:?[=-])(.*))?", re.DOTALL)
_DOC_SPLIT = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)
_YAML = (".yaml", ".yml")
_KEEP = 64  # revisions whose Kustomizations are kept
_AT_REVISION: dict[tuple[Path, str], list[PostBuild]] = {}


def envsubst(
    text: str, variables: Mapping[str, str], *, complete: bool = True
) -> tuple[str, set[str]]:
    """``text`` with Flux's substitution done, and the names left as written.

    ``complete``: every source was read, so a variable without a value is unset (''),
    else it is unknown and its expression stays as written."""
    unknown: set[str] = set()

    def one(match: re.Match[str]) -> str:
        if match.group(1):  # $${var}: the literal ${var}
            return match.group(0)[1:]
        form = _FORM.fullmatch(match.group(2))
        if form is None:  # ${var^}, ${var:1:2}...: not read here, never guessed
            unknown.add(match.group(2))
            return match.group(0)
        name, op, default = form.group(1), form.group(2), form.group(3) or ""
        value = variables.get(name)
        if value is not None and not (op and op.startswith(":") and value == ""):
            return value
        if not complete:
            unknown.add(name)
            return match.group(0)
        return default if op else ""

    return _EXPR.sub(one, text), unknown


@dataclass(frozen=True)
class PostBuild:
    """A Flux Kustomization's post-build substitution: where it applies, with what."""

    name: str
    namespace: str
    file: str  # declaring the Kustomization
    line: int
    path: str  # the repo folder it deploys ('' the root)
    variables: Mapping[str, str]
    unread: tuple[str, ...] = ()  # sources not read, each said with why
    said: str = ""  # how it is named, when not one Kustomization

    @property
    def complete(self) -> bool:
        return not self.unread

    def covers(self, rel: str) -> bool:
        return not self.path or rel == self.path or rel.startswith(self.path + "/")

    def where(self) -> str:
        if self.said:
            return self.said
        return f"Flux Kustomization {self.namespace}/{self.name} ({self.file}:{self.line})"


def post_builds(tree: Tree) -> list[PostBuild]:
    """Every Flux Kustomization of ``tree`` that substitutes variables after its build
    (a revision's read once: a walk over history reads one revision many times)."""
    fixed = isinstance(tree, GitTree)  # a commit's files never change
    key = (tree.root, tree.revision)
    if fixed and key in _AT_REVISION:
        return _AT_REVISION[key]
    builds = _post_builds(tree)
    if fixed:
        if len(_AT_REVISION) >= _KEEP:
            _AT_REVISION.pop(next(iter(_AT_REVISION)))
        _AT_REVISION[key] = builds
    return builds


def _post_builds(tree: Tree) -> list[PostBuild]:
    files = [f for f in _yaml_files(tree) if _has(tree, f, "postBuild")]
    found = [(f, line, d) for f in files for line, d in _documents(tree, f) if _is_post(d)]
    others = _other_repositories(tree, {_source_name(d) for _, _, d in found})
    found = [(f, line, d) for f, line, d in found if _source_name(d) not in others]
    if not found:
        return []
    wanted = {str(_map(s).get("name") or "") for _, _, d in found for s in _sources(d)}
    held = _held_sources(tree, wanted)
    return [_post_build(f, line, d, held) for f, line, d in found]


def substituted_tree(tree: Tree) -> Tree:
    """``tree`` reading the files Flux Kustomizations substitute as Flux applies them
    (``tree`` itself when none does)."""
    if isinstance(tree, SubstitutedTree):
        return tree
    builds = post_builds(tree)
    return SubstitutedTree(tree, builds) if builds else tree


def substituted_reader(root: Path) -> Callable[[str], str]:
    """A reader of the work tree at ``root`` (repo-relative names; OSError when a file
    cannot be read) giving each file as Flux applies it."""
    tree = substituted_tree(FsTree(root))

    def read(rel: str) -> str:
        try:
            return tree.read_text(rel)
        except LoadFailure as exc:
            raise OSError(str(exc)) from None

    return read


@dataclass
class SubstitutedTree:
    """A tree whose ``read_text`` gives a file with its Kustomization's variables in."""

    inner: Tree
    builds: list[PostBuild]
    notes: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (where, file)

    root: Path = field(init=False)
    revision: str = field(init=False)

    def __post_init__(self) -> None:
        self.root, self.revision = self.inner.root, self.inner.revision

    def is_file(self, rel: str) -> bool:
        return self.inner.is_file(rel)

    def files(self, rel: str) -> list[str]:
        return self.inner.files(rel)

    def links(self, rel: str) -> list[str]:
        return self.inner.links(rel)

    def is_link(self, rel: str) -> bool:
        return self.inner.is_link(rel)

    def materialize(self, rel: str) -> AbstractContextManager[Path]:
        return self.inner.materialize(rel)

    def read_text(self, rel: str) -> str:
        text = self.inner.read_text(rel)
        if "${" not in text or not rel.endswith(_YAML):
            return text
        build = self._build_of(rel)
        if build is None:
            return text
        out, unknown = substitute_documents(text, build)
        if unknown:
            self.notes.setdefault((build.where(), rel), set()).update(unknown)
        return out

    def built(self, text: str, root: str) -> str:
        """A kustomize root's build output, substituted as Flux does after the build (on
        the YAML kustomize wrote, so a quoted ``"${n}"`` stays a string, a plain one is
        read as what it becomes)."""
        build = self._build_of(root + "/") if root else self._build_of("")
        if build is None or "${" not in text:
            return text
        out, unknown = substitute_documents(text, build)
        if unknown:
            self.notes.setdefault((build.where(), root or "."), set()).update(unknown)
        return out

    def unknown(self) -> list[tuple[PostBuild, str, list[str]]]:
        """What was left as written: (Kustomization, file, variables), each once."""
        by_where = {b.where(): b for b in self.builds}
        return [
            (by_where[where], rel, sorted(names))
            for (where, rel), names in sorted(self.notes.items())
        ]

    def _build_of(self, rel: str) -> PostBuild | None:
        """The Kustomization deploying ``rel`` nearest to it; two deploying one folder
        with different variables leave it as written (which cluster is meant?)."""
        covering = [b for b in self.builds if b.covers(rel)]
        if not covering:
            return None
        deepest = max(len(b.path) for b in covering)
        nearest = [b for b in covering if len(b.path) == deepest]
        if len({tuple(sorted(b.variables.items())) for b in nearest}) > 1:
            names = " and ".join(b.where() for b in nearest)
            first = nearest[0]
            why = "the Kustomizations deploying it substitute different values"
            return PostBuild(
                first.name, first.namespace, first.file, first.line, first.path, {}, (why,), names
            )
        return nearest[0]


def substitute_documents(text: str, build: PostBuild) -> tuple[str, set[str]]:
    """Each YAML document of ``text`` substituted unless it opts out (Flux's marker)."""
    if not build.variables and build.complete:
        return text, set()  # Flux substitutes nothing without a variable
    out: list[str] = []
    unknown: set[str] = set()
    start = 0
    for cut in [*_DOC_SPLIT.finditer(text), None]:
        end = cut.start() if cut else len(text)
        chunk = text[start:end]
        if "${" in chunk and not _disabled(chunk):
            chunk, missing = envsubst(chunk, build.variables, complete=build.complete)
            unknown |= missing
        out.append(chunk)
        if cut is not None:
            out.append(cut.group(0))
            start = cut.end()
    return "".join(out), unknown


def _disabled(chunk: str) -> bool:
    if DISABLED not in chunk:
        return False
    try:
        body = _map(yaml.safe_load(chunk))
    except yaml.YAMLError:
        return False
    meta = _map(body.get("metadata"))
    marks = (_map(meta.get("labels")).get(DISABLED), _map(meta.get("annotations")).get(DISABLED))
    return "disabled" in marks


def _post_build(
    file: str, line: int, doc: dict[str, Any], held: dict[tuple[str, str], list[_Held]]
) -> PostBuild:
    meta, spec = _map(doc.get("metadata")), _map(doc.get("spec"))
    namespace = str(meta.get("namespace") or "flux-system")
    post = _map(spec.get("postBuild"))
    variables: dict[str, str] = {}
    unread: list[str] = []
    for ref in (_map(s) for s in _sources(doc)):
        kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        what = f"{kind} {namespace}/{name}"
        values, why = _read_source(held, kind, name, namespace, file)
        if why == "absent" and ref.get("optional") is True:
            continue  # Flux skips an optional source that does not exist
        if why:
            unread.append(f"{what} ({'not in this repository' if why == 'absent' else why})")
            continue
        variables.update(values)
    inline = _map(post.get("substitute"))
    variables.update({str(k): _flat(v) for k, v in inline.items()})
    path = _repo_path(str(spec.get("path") or ""))
    return PostBuild(
        str(meta.get("name") or ""), namespace, file, line, path, variables, tuple(unread)
    )


@dataclass(frozen=True)
class _Held:
    file: str
    body: dict[str, Any]


def _read_source(
    held: dict[tuple[str, str], list[_Held]], kind: str, name: str, namespace: str, near: str
) -> tuple[dict[str, str], str]:
    """A source's variables, or why they cannot be read ('absent': no such object)."""
    if kind not in ("ConfigMap", "Secret"):
        return {}, f"kind {kind or 'missing'} is no ConfigMap or Secret"
    candidates = [
        h
        for h in held.get((kind, name), [])
        if str(_map(h.body.get("metadata")).get("namespace") or namespace) == namespace
    ]
    if not candidates:
        return {}, "absent"
    closest = max(_shared(h.file, near) for h in candidates)
    chosen = [h for h in candidates if _shared(h.file, near) == closest]
    readings = [_values(kind, h.body) for h in chosen]
    if len({tuple(sorted(v.items())) for v, _ in readings}) > 1:
        files = ", ".join(sorted(h.file for h in chosen))
        return {}, f"declared with different data in {files}"
    return readings[0]


def _values(kind: str, body: dict[str, Any]) -> tuple[dict[str, str], str]:
    if kind == "Secret" and "sops" in body:
        return {}, "SOPS-encrypted"
    out: dict[str, str] = {}
    if kind == "Secret":
        for k, v in _map(body.get("data")).items():
            try:
                out[str(k)] = _flat(base64.b64decode(str(v), validate=True).decode())
            except (binascii.Error, UnicodeDecodeError):
                return {}, f"its data.{k} is not base64 of UTF-8 text"
        out.update({str(k): _flat(v) for k, v in _map(body.get("stringData")).items()})
        return out, ""
    return {str(k): _flat(v) for k, v in _map(body.get("data")).items()}, ""


def _held_sources(tree: Tree, names: set[str]) -> dict[tuple[str, str], list[_Held]]:
    """The ConfigMaps and Secrets of the repository with one of ``names``."""
    out: dict[tuple[str, str], list[_Held]] = {}
    names.discard("")
    if not names:
        return out
    for f in _yaml_files(tree):
        if not any(_has(tree, f, n) for n in names):
            continue
        for _, doc in _documents(tree, f):
            kind = str(doc.get("kind") or "")
            name = str(_map(doc.get("metadata")).get("name") or "")
            if kind in ("ConfigMap", "Secret") and name in names:
                out.setdefault((kind, name), []).append(_Held(f, doc))
    return out


def _yaml_files(tree: Tree) -> list[str]:
    return [f for f in tree.files("") if f.endswith(_YAML) and not f.startswith(".gitmedic/")]


def _has(tree: Tree, rel: str, word: str) -> bool:
    try:
        return word in tree.read_text(rel)
    except LoadFailure:
        return False  # the loader says why it cannot read it


def _documents(tree: Tree, rel: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each mapping document of ``rel`` with its first line (an unreadable file: none)."""
    try:
        text = tree.read_text(rel)
        loader = yaml.SafeLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                body = loader.construct_document(node)
                if isinstance(body, dict):
                    yield node.start_mark.line + 1, body
        finally:
            loader.dispose()
    except (LoadFailure, yaml.YAMLError, ValueError):
        return


def _is_post(doc: dict[str, Any]) -> bool:
    """A Flux Kustomization of a Git source substituting after its build (one with no
    ``sourceRef`` is a kustomize patch of one, not a deployer)."""
    group = str(doc.get("apiVersion") or "").split("/")[0]
    spec = _map(doc.get("spec"))
    ref = _map(spec.get("sourceRef"))
    return (
        (group, doc.get("kind")) == _KUSTOMIZE
        and ref.get("kind") == "GitRepository"
        and bool(_map(spec.get("postBuild")))
    )


def _source_name(doc: dict[str, Any]) -> str:
    return str(_map(_map(doc.get("spec")).get("sourceRef")).get("name") or "")


def _other_repositories(tree: Tree, names: set[str]) -> set[str]:
    """Which of ``names`` the repository declares as a GitRepository of another URL than
    ``flux-system``'s (this checkout, as bootstrap made it): their paths are not ours."""
    names = names - {"flux-system", ""}
    if not names:
        return set()
    urls: dict[str, str] = {}
    for f in _yaml_files(tree):
        if not _has(tree, f, "GitRepository"):
            continue
        for _, doc in _documents(tree, f):
            group = str(doc.get("apiVersion") or "").split("/")[0]
            if doc.get("kind") == "GitRepository" and group == "source.toolkit.fluxcd.io":
                name = str(_map(doc.get("metadata")).get("name") or "")
                urls[name] = str(_map(doc.get("spec")).get("url") or "").removesuffix(".git")
    home = urls.get("flux-system")
    return {n for n in names if n in urls and (home is None or urls[n] != home)}


def _sources(doc: dict[str, Any]) -> Iterable[Any]:
    listed = _map(_map(doc.get("spec")).get("postBuild")).get("substituteFrom")
    return listed if isinstance(listed, list) else []


def _shared(a: str, b: str) -> int:
    """How many leading folders two repo paths share."""
    pa, pb = posixpath.dirname(a).split("/"), posixpath.dirname(b).split("/")
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return n


def _repo_path(rel: str) -> str:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    return "/".join(parts)


def _flat(value: Any) -> str:
    """A value as Flux reads it: text, its newlines removed."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = "" if value is None else str(value)
    return text.replace("\n", "")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def flux_built(tree: Tree, text: str, root: str) -> str:
    """``text``, the build output of the kustomize root ``root``, as Flux applies it."""
    return tree.built(text, root) if isinstance(tree, SubstitutedTree) else text


def unknown_variables(tree: SubstitutedTree, parts: Sequence[Part]) -> list[ManifestError]:
    """What the loader says of the variables left as written: one error per
    Kustomization and file, naming the sources it could not read and the variables; and
    the apps holding them are not judged (a literal ``${var}`` read as a ConfigMap's name
    would make a false critical, and so would leaving that object out of its app)."""
    errors: list[ManifestError] = []
    held: set[str] = set()
    for build, rel, names in tree.unknown():
        held.add(rel)
        errors.append(
            ManifestError(
                build.file,
                build.line,
                f"{build.where()} substitutes {', '.join('${' + n + '}' for n in names)} in "
                f"{rel} from {'; '.join(build.unread)}, which gitmedic cannot read",
            )
        )
    for part in parts:
        files = {o.source.file for o in part.objects if o.source is not None}
        if part.objects and (part.root in held or files & held):
            where = part.root or ", ".join(sorted(files & held))
            errors.append(
                ManifestError(
                    where,
                    0,
                    f"the app at {where} holds Flux variables gitmedic cannot read: none of "
                    "its objects is judged",
                )
            )
            part.objects.clear()
    return errors
