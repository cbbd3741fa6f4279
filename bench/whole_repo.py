"""Benchmark: whole-repo ``gitmedic detect .`` against kubeconform on the same tree (CPU).

Issue 22's goal: whole-repo detection within 2x of kubeconform or kube-linter on
the same tree. Each repository is checked from its root, as a new user would:

- ``gitmedic detect . --format json``: every kustomize root rendered once
  (``kubectl kustomize``), every chart rendered (``helm template``), loose files
  parsed, each app evaluated by every built-in detector and validated against
  the Kubernetes schemas;
- ``kubeconform -strict -summary .``: every YAML file of the tree parsed and
  validated against the same Kubernetes schemas (kubernetes-validate's
  v1.37.0-local-strict set, made standalone once into a cache folder, since
  kubeconform cannot follow their shared ``_definitions.json``; no network).
  kubeconform renders nothing: it validates the files as they are;
- the pipeline a team runs to validate what gitmedic validates (what kube-linter
  does inside: render, then check), with the same binaries: every kustomize root
  gitmedic renders through ``kubectl kustomize`` (the kubectl gitmedic finds), every
  chart through ``helm template`` with the values gitmedic gives it (the chart's own;
  the repos here have no ``.gitmedic/config.yaml``), and the loose manifests, all
  concatenated into one stream piped to ``kubeconform -strict`` (same schemas), and
  the same stream piped to ``kube-score score -``. The roots, charts and loose files
  are gitmedic's own plan of the tree (:func:`gitmedic.reconciler.manifests.layout.plan`),
  computed once outside the timing. A chart gitmedic pulls from a repository (a
  HelmRelease's) is left out: neither can reach it offline.

CPU time is user + system of the process and everything it waited for (helm,
kubectl), from ``getrusage(RUSAGE_CHILDREN)``, so machine load moves it less than
wall time. gitmedic runs through a two-line launcher that, as it exits, reports its
own CPU apart from its children's (the renderers and git), and ``gitmedic detect``
of an empty folder is timed too: the start-up any detect pays. Each command runs once
untimed, then ``--runs`` times interleaved; medians are reported. Exits 1 when a
ratio to the render-then-validate pipeline passes 2.0.

    PYTHONPATH=$PWD/src .venv/bin/python bench/whole_repo.py --kubeconform /path/to/kubeconform \
        [--kube-score PATH] [--runs 5] [REPO ...]
    # default: the two repos of /work/shared/data/gitops-repos (the same files as
    # tests/fixtures/data/gitops-repos, outside a git work tree)

kubeconform: ``GOBIN=$(mktemp -d) go install github.com/yannh/kubeconform/cmd/kubeconform@latest``.
helm comes from ``.ci/tools.sh helm`` (the pinned build the tests use).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from run import ROOT, gitmedic_cmd, machine, revision

REPOS = [
    Path("/work/shared/data/gitops-repos") / n for n in ("podinfo", "flux2-kustomize-helm-example")
]
SCHEMA_SET = "v1.37.0-local-strict"
FORMAT = 2  # of the cached standalone schemas: bump to rebuild them
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gitmedic-bench"
_DEFS = "/api/_definitions.json#/$defs/"
EMPTY = CACHE / "empty-folder"
KUBE_SCORE = Path.home() / ".cache/gitmedic-tools/kube-score-v1.20.0/kube-score"


# gitmedic's CLI, then its own and its children's CPU (user + system) on stderr's last line.
SPLIT = (
    "import json, resource, sys\n"
    "from gitmedic.bot.cli.main import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, "
    "resource.RUSAGE_CHILDREN))\n"
    "    sys.stderr.write('\\n' + json.dumps({'self': own.ru_utime + own.ru_stime, "
    "'children': kids.ru_utime + kids.ru_stime}) + '\\n')\n"
    "sys.exit(code)\n"
)


def cpu_run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str, str]:
    """(CPU s, wall s, stdout, stderr) of one run, children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1, 2):  # 2: detect's errors, counted in the table
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return cpu, wall, proc.stdout, proc.stderr


def standalone_schemas() -> Path:
    """kubernetes-validate's schemas with their shared definitions inlined (once)."""
    import kubernetes_validate

    source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / SCHEMA_SET
    out = CACHE / f"kubeconform-{SCHEMA_SET}-{FORMAT}"
    if (out / ".complete").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    defs: dict[str, Any] = json.loads((source / "_definitions.json").read_text())["$defs"]
    for path in sorted(source.glob("*.json")):
        if path.name.startswith("_"):
            continue
        schema = json.loads(path.read_text())
        schema.pop("$id", None)  # a URL id would make "#/$defs/..." refer to that URL
        needed = _closure(schema, defs)
        text = json.dumps({**schema, "$defs": {k: defs[k] for k in sorted(needed)}})
        (out / path.name).write_text(text.replace(_DEFS, "#/$defs/"))
    (out / ".complete").write_text("")
    return out


def _closure(schema: Any, defs: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and "#/$defs/" in ref:  # in a schema, or between defs
                name = ref.partition("#/$defs/")[2]
                if name not in seen and name in defs:
                    seen.add(name)
                    pending.append(defs[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return seen


def helm_env() -> dict[str, str]:
    folder = subprocess.run(
        [str(ROOT / ".ci/tools.sh"), "helm"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}"}


def peer_plan(repo: Path) -> tuple[list[str], list[str], list[str]]:
    """gitmedic's own plan of ``repo``: kustomize roots, charts and loose manifests."""
    from gitmedic.reconciler.manifests.layout import plan
    from gitmedic.reconciler.manifests.tree import FsTree

    tree = FsTree(repo)
    layout = plan(tree, tree.files(""))
    return layout.kustomize_roots, layout.charts, layout.loose


def render_script(repo: Path, helm: str) -> str:
    """A shell command writing every app of ``repo`` rendered, as one YAML stream."""
    from gitmedic.reconciler.manifests.kustomize import ROOT_ONLY, kubectl_path

    roots, charts, loose = peer_plan(repo)
    kubectl = kubectl_path()
    steps = [
        f"{shlex.quote(kubectl)} kustomize --load-restrictor={ROOT_ONLY} {shlex.quote(r or '.')}"
        for r in roots
    ]
    steps += [
        shlex.join([helm, "template", Path(c).name or "release", c or "."])
        + " --namespace default --no-hooks --skip-tests"
        for c in charts
    ]
    if loose:  # one process for them all, each file its own documents
        steps.append(shlex.join(["awk", 'FNR == 1 { print "---" } { print }', *loose]))
    # a failed render is the peer's error, not the end of its run (as gitmedic goes on)
    return "{ " + " ".join(f"{s} || true; echo ---;" for s in steps) + " }"


def measure(
    repo: Path,
    kubeconform: str,
    kube_score: str | None,
    schemas: Path,
    runs: int,
    before: Path | None = None,
) -> dict[str, Any]:
    from gitmedic.reconciler.manifests.render_caps import RenderCaps
    from gitmedic.reconciler.manifests.render_pool import go_env

    env = helm_env()
    helm = subprocess.run(
        ["sh", "-c", "command -v helm"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    rendered = render_script(repo, helm)
    schema_location = f"{schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json"
    flags = ["-strict", "-summary", "-ignore-missing-schemas", "-output", "json"]
    validate = shlex.join([kubeconform, *flags, "-schema-location", schema_location, "-"])
    commands = {
        "gitmedic": [sys.executable, "-c", SPLIT, "detect", ".", "--format", "json"],
        "kubeconform": [
            kubeconform,
            "-strict",
            "-summary",
            "-ignore-missing-schemas",
            "-output",
            "json",
            "-schema-location",
            f"{schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
            ".",
        ],
        "render, kubeconform": ["sh", "-c", f"{rendered} | {validate}"],
        # detect on an empty folder: the start-up (imports, parser) any detect pays
        "start-up": [*gitmedic_cmd(), "detect", str(EMPTY), "--format", "json"],
    }
    if kube_score:
        score = f"{shlex.quote(kube_score)} score -"
        commands["render, kube-score"] = ["sh", "-c", f"{rendered} | {score}"]
    # the same renders with the Go collector set as gitmedic sets it for kubectl and helm
    # (render_pool.go_env): how much of the gap is that setting, not the work
    go = " ".join(f"{k}={v}" for k, v in go_env({}, RenderCaps().memory_mib).items())
    commands["render (GOGC as gitmedic), kubeconform"] = [
        "sh",
        "-c",
        f"export {go}; {rendered} | {validate}",
    ]
    envs = {name: env for name in commands}
    if before is not None:  # the same detect from another source tree, interleaved
        commands["gitmedic before"] = commands["gitmedic"]
        envs["gitmedic before"] = {**env, "PYTHONPATH": str(before)}
    EMPTY.mkdir(parents=True, exist_ok=True)
    outputs = {name: cpu_run(cmd, repo, envs[name])[2] for name, cmd in commands.items()}
    cpu: dict[str, list[float]] = {n: [] for n in commands}
    wall: dict[str, list[float]] = {n: [] for n in commands}
    split: dict[str, list[float]] = {"self": [], "children": []}
    for _ in range(runs):
        for name, cmd in commands.items():
            c, w, _, err = cpu_run(cmd, repo, envs[name])
            cpu[name].append(c)
            wall[name].append(w)
            if name == "gitmedic":
                own = json.loads(err.rstrip().rpartition("\n")[2])
                for part in split:
                    split[part].append(own[part])
    report = json.loads(outputs["gitmedic"])
    summary = json.loads(outputs["kubeconform"]).get("summary", {})
    piped = json.loads(outputs["render, kubeconform"]).get("summary", {})
    return {
        "repo": repo.name,
        "cpu": {n: statistics.median(v) for n, v in cpu.items()},
        "wall": {n: statistics.median(v) for n, v in wall.items()},
        "split": {n: statistics.median(v) for n, v in split.items()},
        "findings": len(report["findings"]),
        "errors": len(report["errors"]),
        "kubeconform": summary,
        "piped": piped,
        "peers": [n for n in commands if n not in ("gitmedic", "start-up")],
        "before": json.loads(outputs["gitmedic before"]) if before else None,
        "plan": [len(part) for part in peer_plan(repo)],
    }


def table(rows: list[dict[str, Any]], runs: int, load: str) -> str:
    lines = [
        f"- machine: {machine()}; commit {revision()}; median of {runs} interleaved runs after"
        f" a warm-up; load average (1, 5, 15 min) {load}",
        "",
        "| repo | command | CPU s | gitmedic / it, CPU | wall s | gitmedic / it, wall |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        for name in ["gitmedic", *r["peers"]]:
            cpu, wall = r["cpu"][name], r["wall"][name]
            ratio = r["cpu"]["gitmedic"] / max(cpu, 1e-3)
            wall_ratio = r["wall"]["gitmedic"] / max(wall, 1e-3)
            lines.append(
                f"| {r['repo']} | {name} | {cpu:.2f} | {ratio:.1f}x | {wall:.2f} |"
                f" {wall_ratio:.1f}x |"
            )
    lines += [
        "",
        "| repo | kustomize roots / charts / loose files rendered | gitmedic findings / errors |"
        " kubeconform alone | render, kubeconform |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['repo']} | {' / '.join(map(str, r['plan']))} |"
            f" {r['findings']} / {r['errors']}{_before(r)} | {_summary(r['kubeconform'])} |"
            f" {_summary(r['piped'])} |"
        )
    lines += [
        "",
        "Where gitmedic's CPU goes (medians; renderers = its child processes: kubectl"
        " kustomize, helm, git):",
        "",
        "| repo | gitmedic's own Python CPU s | renderers CPU s | empty-folder detect CPU s |",
        "|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['repo']} | {r['split']['self']:.2f} | {r['split']['children']:.2f} |"
            f" {r['cpu']['start-up']:.2f} |"
        )
    return "\n".join(lines)


def _before(r: dict[str, Any]) -> str:
    b = r.get("before")
    return f" (before: {len(b['findings'])} / {len(b['errors'])})" if b else ""


def _summary(kc: dict[str, Any]) -> str:
    return (
        f"{kc.get('valid', '?')} valid, {kc.get('invalid', '?')} invalid,"
        f" {kc.get('errors', '?')} errors, {kc.get('skipped', '?')} skipped"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*", type=Path, default=REPOS)
    parser.add_argument("--kubeconform", default=os.environ.get("KUBECONFORM", "kubeconform"))
    parser.add_argument("--kube-score", default=str(KUBE_SCORE) if KUBE_SCORE.exists() else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, help="a src folder to time detect from too")
    args = parser.parse_args()
    schemas = standalone_schemas()
    before = os.getloadavg()
    rows = [
        measure(r.resolve(), args.kubeconform, args.kube_score, schemas, args.runs, args.before)
        for r in args.repos
    ]
    after = os.getloadavg()
    load = " to ".join(", ".join(f"{x:.1f}" for x in avg) for avg in (before, after))
    print(table(rows, args.runs, load))
    # the peer doing the same work (rendering, then validating): issue 22's 2x
    peer = "render, kubeconform"
    worst = max(r["cpu"]["gitmedic"] / max(r["cpu"][peer], 1e-3) for r in rows)
    return 0 if worst <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
