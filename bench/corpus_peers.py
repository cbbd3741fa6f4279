"""The peers of `gitmedic detect` on the corpus: one rendered stream per app, three linters.

kube-score, kubeconform and kube-linter read Kubernetes objects, not charts or
kustomizations (kube-linter reads both, but not a whole repository of them), so each
app is rendered once into a flat YAML stream the way gitmedic reads it: a chart with
``helm template``, a kustomize root with ``kubectl kustomize``, loose files as they
are; a folder holding several roots (a whole repository) renders each root, and its
loose files. Every peer reads that same stream; the time to render it is not counted.

kubeconform validates against kubernetes-validate's schemas (the ones gitmedic's
schema detector uses), made loadable offline by pointing their ``$ref``s at a local
copy of ``_definitions.json``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

SKIP_DIRS = {".git", "node_modules"}
# As gitmedic renders a chart: for the Kubernetes version of its schemas, without hooks.
HELM_AS_GITMEDIC = ("--kube-version", "1.37.0", "--no-hooks", "--skip-tests")


@dataclass(frozen=True)
class Measured:
    exit_code: int
    stdout: str
    stderr: str
    cpu_seconds: float  # user + system of the child


def measured(argv: Sequence[str], cwd: Path | None = None) -> Measured:
    """Run a command to completion and report its CPU time (children's rusage delta)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(done.returncode, done.stdout, done.stderr, cpu)


def kubectl() -> str:
    beside = Path(sys.executable).parent / "kubectl"
    return str(beside) if beside.exists() else shutil.which("kubectl") or "kubectl"


def _roots(folder: Path) -> Iterator[tuple[str, Path]]:
    """("chart" | "kustomize" | "file", path) for every root and loose file under folder."""
    if (folder / "Chart.yaml").is_file():
        yield "chart", folder
        return
    if (folder / "kustomization.yaml").is_file() or (folder / "kustomization.yml").is_file():
        yield "kustomize", folder
        return
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and entry.name not in SKIP_DIRS and not entry.name.startswith("."):
            yield from _roots(entry)
        elif entry.suffix in (".yaml", ".yml"):
            yield "file", entry


def _objects(text: str) -> list[dict[str, object]]:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    return [d for d in docs if isinstance(d, dict) and "kind" in d and "apiVersion" in d]


def render(target: Path, namespace: str, release: str) -> tuple[list[dict[str, object]], list[str]]:
    """The objects of target, as a peer would be given them, and what failed to render."""
    objects: list[dict[str, object]] = []
    failures: list[str] = []
    for kind, path in _roots(target):
        if kind == "file":
            objects += _objects(path.read_text(encoding="utf-8", errors="replace"))
            continue
        if kind == "chart":
            argv = [
                "helm",
                "template",
                release,
                str(path),
                "--namespace",
                namespace,
                *HELM_AS_GITMEDIC,
            ]
        else:
            argv = [kubectl(), "kustomize", str(path)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            failures.append(f"{path.relative_to(target)}: {done.stderr.strip()[:160]}")
        objects += _objects(done.stdout)
    return objects, failures


def write_stream(objects: list[dict[str, object]], path: Path) -> None:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")


def offline_schemas(cache: Path) -> Path:
    """kubernetes-validate's strict schemas with their $refs pointing at a local file."""
    import kubernetes_validate

    versions = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    source = sorted(versions.glob("v*-local-strict"))[-1]
    dest = cache / source.name
    if not (dest / "_definitions.json").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        url = f'"{(dest / "_definitions.json").as_uri()}#'
        for schema in source.glob("*.json"):
            text = schema.read_text(encoding="utf-8").replace('"/api/_definitions.json#', url)
            (dest / schema.name).write_text(text, encoding="utf-8")
    return dest


@dataclass(frozen=True)
class PeerResult:
    tool: str
    cpu_seconds: float
    summary: str  # what it reported, in its own terms


def kube_score(binary: str, stream: Path) -> PeerResult:
    run = measured([binary, "score", "--output-format", "ci", str(stream)])
    lines = run.stdout.splitlines()
    critical = sum(line.startswith("[CRITICAL]") for line in lines)
    warning = sum(line.startswith("[WARNING]") for line in lines)
    return PeerResult("kube-score", run.cpu_seconds, f"{critical} critical, {warning} warning")


def kubeconform(binary: str, stream: Path, schemas: Path) -> PeerResult:
    location = str(schemas / "{{ .ResourceKind }}{{ .KindSuffix }}.json")
    argv = [binary, "-strict", "-summary", "-output", "json", "-ignore-missing-schemas"]
    run = measured([*argv, "-schema-location", location, str(stream)])
    try:
        summary = json.loads(run.stdout).get("summary", {})
    except json.JSONDecodeError:
        return PeerResult("kubeconform", run.cpu_seconds, f"exit {run.exit_code}")
    text = f"{summary.get('invalid', 0)} invalid, {summary.get('errors', 0)} errors"
    return PeerResult(
        "kubeconform", run.cpu_seconds, f"{text}, {summary.get('skipped', 0)} skipped"
    )


def kube_linter(binary: str, stream: Path) -> PeerResult:
    run = measured([binary, "lint", "--format", "json", str(stream)])
    try:
        reports = json.loads(run.stdout).get("Reports") or []
    except json.JSONDecodeError:
        return PeerResult("kube-linter", run.cpu_seconds, f"exit {run.exit_code}")
    return PeerResult("kube-linter", run.cpu_seconds, f"{len(reports)} reports")


def find_tool(name: str, pinned: str | None, given: str | None) -> str | None:
    """A peer's binary: given on the command line, the pinned build, or PATH."""
    if given:
        return given
    tools = Path(os.environ.get("GITMEDIC_TOOLS") or Path.home() / ".cache" / "gitmedic-tools")
    if pinned and (tools / f"{name}-{pinned}" / name).is_file():
        return str(tools / f"{name}-{pinned}" / name)
    return shutil.which(name)
