"""Benchmark: what three cost attacks of issue 27 take from ``gitmedic detect``.

The attacks (the same as tests/security/test_render_caps.py and test_cel_cost.py):

- ``looping-chart``: a nine-line Helm template looping 100,000 times;
- ``hidden-cel``: a 1.6 KB learned rule whose ``// \"\"\"`` comments hide 600
  nodes of list concatenation from a text-based cost check;
- ``costly-cel``: a learned rule under every static bound whose evaluation copies
  long lists at every step.

Each is run through ``gitmedic detect`` in a subprocess with the sources given
(``--src``, default this checkout's), under an address-space limit of 3 GiB and
a timeout of 300 s so the uncapped baseline cannot take the machine down. Prints
a Markdown table: exit code, wall seconds, the peak RSS of the process tree's
largest process, and the last line of stderr.

    .venv/bin/python bench/attack_bounds.py [--src /path/to/src] [--helm /path/to/helm/dir]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOOP = """\
{{- range $i := until 100000 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
data:
  i: "{{ $i }}"
{{- end }}
"""
TUNING = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tuning, namespace: shop}\n"
RULE = """\
id: learned-weights
description: Weights that cancel out (a ConfigMap's tuning list).
severity: warning
reads: [ConfigMap]
match: |
  has(object.weights) && %s
message: "{kind} {name} has weights that cancel out"
playbooks: [scaled-to-zero]
"""
_SUM = "(" + " + ".join(["x"] * 25) + ")"
HIDDEN = (
    'object.weights.filter(a, a < 4).exists(a, // """ compare each weight\n'
    f"    [object.weights].exists(x, x.exists(b, [{', '.join([_SUM] * 12)}].size() < 0))"
    ' // """ with every other\n  )'
)
_SUMS = ",".join(["(" + "+".join(["w"] * 24) + ")"] * 7)
COSTLY = f"[object.weights].exists(w, w.exists(b, [{_SUMS}].size() < 0))"
LIMIT_AS = 3 * 2**30


def _git(repo: Path) -> None:
    ident = ["-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qm", "attack"], check=True)


def looping_chart(base: Path) -> Path:
    repo = base / "looping-chart"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: loop\nversion: 0.1.0\n")
    (repo / "chart" / "templates" / "loop.yaml").write_text(LOOP)
    _git(repo)
    return repo / "chart"


def cel_rule(base: Path, name: str, match: str) -> Path:
    repo = base / name
    (repo / "apps").mkdir(parents=True)
    weights = ", ".join(str(i) for i in range(256))
    (repo / "apps" / "tuning.yaml").write_text(f"{TUNING}weights: [{weights}]\n")
    (repo / ".gitmedic" / "rules").mkdir(parents=True)
    (repo / ".gitmedic" / "rules" / "weights.yaml").write_text(RULE % match)
    _git(repo)
    return repo / "apps"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def run(path: Path, src: Path, env: dict[str, str]) -> tuple[int, float, int, str]:
    """Exit code, wall seconds, peak RSS in MiB and stderr's last line of one detect."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "tail = (p.stderr.strip().splitlines() or [''])[-1][:110]\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
        "print(p.returncode, rss, tail, sep='\\t')\n"
    )
    argv = [sys.executable, "-m", "gitmedic", "detect", str(path)]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", wrapper, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            env={**env, "PYTHONPATH": str(src)},
            preexec_fn=_limits,  # the bench is single-threaded: safe here
        )
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - started, -1, "timed out after 300 s"
    took = time.monotonic() - started
    code, rss, tail = [*proc.stdout.strip().split("\t"), "", "", ""][:3]
    return int(code or -1), took, int(rss or -1), tail


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=Path(__file__).parents[1] / "src")
    parser.add_argument("--helm", type=Path, default=None, help="a folder holding helm")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.helm:
        env["PATH"] = f"{args.helm}{os.pathsep}{env['PATH']}"
    with tempfile.TemporaryDirectory(prefix="gitmedic-attacks-") as scratch:
        base = Path(scratch)
        attacks = {
            "looping-chart": looping_chart(base),
            "hidden-cel": cel_rule(base, "hidden-cel", HIDDEN),
            "costly-cel": cel_rule(base, "costly-cel", COSTLY),
        }
        print(f"src: {args.src}\n")
        print("| attack | exit | wall s | peak RSS MiB | stderr's last line |")
        print("|---|---:|---:|---:|---|")
        for name, path in attacks.items():
            code, took, rss, tail = run(path, args.src, env)
            print(f"| {name} | {code} | {took:.1f} | {rss} | {tail.replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
