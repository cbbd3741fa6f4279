"""Benchmark: what finding Flux's postBuild Kustomizations costs each load.

Every ``load_tree`` looks for the Flux Kustomizations with ``spec.postBuild`` in the
whole tree (a substring test of each YAML file, then a parse of the few that name
``postBuild`` and of those naming a source): a work tree is scanned each load, a
revision once (cached). This measures that scan alone, in CPU time (median of
``--runs``), on a generated repository of ``--files`` YAML files, one of them a
Kustomization substituting from a ConfigMap, and on the repositories given.

    .venv/bin/python bench/flux_postbuild_scan.py [--files 2000] [--runs 5] [REPO ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gitmedic.reconciler.manifests.flux_substitute import _AT_REVISION, post_builds
from gitmedic.reconciler.manifests.tree import FsTree, GitTree

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{n}, namespace: shop}}
spec:
  replicas: ${{replicas:=1}}
  selector: {{matchLabels: {{app: app-{n}}}}}
  template:
    metadata: {{labels: {{app: app-{n}}}}}
    spec: {{containers: [{{name: main, image: "nginx:1.27"}}]}}
"""
KUSTOMIZATION = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
  postBuild:
    substituteFrom: [{kind: ConfigMap, name: cluster-vars}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-vars, namespace: flux-system}
data: {replicas: "2"}
"""


def generated(root: Path, files: int) -> Path:
    (root / "apps").mkdir(parents=True)
    (root / "clusters").mkdir()
    (root / "clusters/apps.yaml").write_text(KUSTOMIZATION)
    for n in range(files - 1):
        (root / f"apps/app-{n}.yaml").write_text(DEPLOYMENT.format(n=n))
    git = ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    return root


def cpu_ms(run: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        run()  # type: ignore[operator]
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def measure(repo: Path, runs: int) -> str:
    fs = FsTree(repo)
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    found = len(post_builds(fs))
    work = cpu_ms(lambda: post_builds(fs), runs)

    def cold() -> None:
        _AT_REVISION.clear()
        post_builds(GitTree(repo, head))

    revision = cpu_ms(cold, runs)
    tree = GitTree(repo, head)
    post_builds(tree)
    cached = cpu_ms(lambda: post_builds(tree), runs)
    yamls = len([f for f in fs.files("") if f.endswith((".yaml", ".yml"))])
    return f"| {repo.name} | {yamls} | {found} | {work:.1f} | {revision:.1f} | {cached:.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("repos", nargs="*", type=Path)
    args = parser.parse_args()
    print("| repo | YAML files | postBuild Kustomizations | work tree ms | revision ms (cold) "
          "| revision ms (cached) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        print(measure(generated(Path(tmp) / "generated", args.files), args.runs))
    for repo in args.repos:
        print(measure(repo.resolve(), args.runs))


if __name__ == "__main__":
    main()
