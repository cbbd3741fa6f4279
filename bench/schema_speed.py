"""Schema validation's cost: detect on 10,000 objects beside a libyaml parse and kubeconform.

``gitmedic detect`` validates every object against the Kubernetes schemas. The
target is that detect on the generated 10,000-object namespace (every object
valid, as a real namespace is) costs at most 1.5 times a bare CSafeLoader parse
of the same stream: reading, indexing, every detector and the schema check
together. kubeconform (Go, validating the same stream against the same schemas)
runs beside them where it is built; it needs schemas, and offline it reads them
from a folder: this script writes one from the schemas kubernetes-validate
bundles (each kind's strict schema with the definitions embedded, so no ``$ref``
leaves the file), the set detect validates against.

Every command is a fresh process (start-up included), run once untimed and then
``--runs`` times interleaved round-robin, so machine load hits all alike; the
medians of wall time and of CPU time (user + system, from ``wait4``) are
reported. Load on a shared machine moves wall time more than CPU time; the
verdict is on CPU time, and both are shown.

    GOBIN=$(mktemp -d) go install github.com/yannh/kubeconform/cmd/kubeconform@latest
    python bench/schema_speed.py [--runs 7] [--kubeconform PATH] [--before SRC] [--write]

``--before SRC`` adds the same detect with another ``src`` folder on ``PYTHONPATH``
(``git archive main src | tar -x -C DIR`` makes one), interleaved with the rest: a
change's before and after measured in one run, under the same load.

``--write`` replaces this benchmark's section of bench/RESULTS.md. Exits 1 when
detect costs more than 1.5 times the parse.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from gen_namespace import NAMESPACE, generate

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
TARGET = 1.5
BEGIN, END = "<!-- schema-speed: kept by bench/schema_speed.py -->", "<!-- /schema-speed -->"
PARSE = (
    "import sys, yaml\n"
    "with open(sys.argv[1], encoding='utf-8') as f:\n"
    "    for _ in yaml.load_all(f, Loader=yaml.CSafeLoader): pass\n"
)
_REF = "/api/_definitions.json#/$defs/"


def timed(cmd: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` (exit 0 or 1: findings are no failure)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime


def medians(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float]]:
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for cmd in commands.values():
        timed(cmd)  # warm-up: page cache, schema files
    for _ in range(runs):
        for name, cmd in commands.items():
            samples[name].append(timed(cmd))
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for name, got in samples.items()
    }


def kubeconform_schemas(stream: Path, folder: Path) -> str:
    """Standalone strict schemas of the stream's kinds, as kubeconform names them."""
    from gitmedic.reconciler.manifests.schema import resolve_version
    from gitmedic.reconciler.manifests.schema_files import definitions, kind_schema

    version = resolve_version(None)
    defs = definitions(version)["$defs"]
    kinds = {
        (d["apiVersion"], d["kind"]) for d in yaml.load_all(stream.read_text(), yaml.CSafeLoader)
    }
    for api_version, kind in sorted(kinds):
        schema = kind_schema(version, api_version, kind)
        schema.pop("$id", None)
        schema["$defs"] = defs
        group, _, ver = api_version.rpartition("/")
        suffix = f"-{group.split('.')[0]}-{ver}" if group else f"-{ver}"
        text = json.dumps(schema).replace(json.dumps(_REF)[1:-1], "#/$defs/")
        (folder / f"{kind.lower()}{suffix}.json").write_text(text)
    return str(folder / "{{ .ResourceKind }}{{ .KindSuffix }}.json")


def gitmedic() -> list[str]:
    script = Path(sys.executable).parent / "gitmedic"
    return [str(script)] if script.exists() else [sys.executable, "-m", "gitmedic"]


def commands(
    stream: Path, kubeconform: str | None, tmp: Path, before: Path | None = None
) -> dict[str, list[str]]:
    detect = [*gitmedic(), "detect", str(stream), "--namespace", NAMESPACE, "--format", "json"]
    out = {
        "detect": detect,
        # the same run without the schema detector: what validation itself costs
        "detect without schema": [*detect, *without_schema()],
        "parse": [sys.executable, "-c", PARSE, str(stream)],
    }
    if before is not None:
        out[f"detect, {before} (before)"] = ["env", f"PYTHONPATH={before}", *detect]
    if kubeconform:
        location = kubeconform_schemas(stream, tmp)
        out["kubeconform"] = [kubeconform, "-strict", "-summary", "-schema-location", location,
                              str(stream)]  # fmt: skip
    return out


def without_schema() -> list[str]:
    from gitmedic.detectors.builtin import builtin_registry

    ids = [d.id for d in builtin_registry() if d.id != "schema-invalid"]
    return [arg for i in ids for arg in ("--detector", i)]


def verified(stream: Path) -> int:
    """The generated objects are valid and detect says so: what is timed is real work."""
    done = subprocess.run(
        [*gitmedic(), "detect", str(stream), "--namespace", NAMESPACE, "--format", "json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    report = json.loads(done.stdout)
    bad = [f for f in report["findings"] if f["detector"] == "schema-invalid"]
    if done.returncode not in (0, 1) or bad:
        raise SystemExit(f"detect did not validate the stream cleanly: {bad[:2]} {done.stderr}")
    return len(report["findings"])


def report(times: dict[str, tuple[float, float]], objects: int, runs: int, findings: int) -> str:
    parse_wall, parse_cpu = times["parse"]
    rows = [
        f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / parse_wall:.2f} | {cpu / parse_cpu:.2f} |"
        for name, (wall, cpu) in times.items()
    ]
    ratio = times["detect"][1] / parse_cpu
    schema_cpu = times["detect"][1] - times["detect without schema"][1]
    return "\n".join(
        [
            BEGIN,
            "## Schema validation: detect on 10,000 objects beside a libyaml parse and kubeconform",
            "",
            "Command: `.venv/bin/python bench/schema_speed.py --runs "
            f"{runs} --kubeconform $(command -v kubeconform) --write` (kubeconform built with "
            "`GOBIN=$(mktemp -d) go install github.com/yannh/kubeconform/cmd/kubeconform@latest`, "
            "its schemas written offline from kubernetes-validate's strict ones). "
            f"{objects} generated objects (`bench/gen_namespace.py`, every one valid; detect "
            f"finds {findings}), fresh process per run, median of {runs} interleaved runs.",
            "",
            "| command | wall s | CPU s | wall / parse | CPU / parse |",
            "|---|---:|---:|---:|---:|",
            *rows,
            "",
            f"**detect / parse, CPU: {ratio:.2f}** (target <= {TARGET}; "
            f"{'meets' if ratio <= TARGET else 'MISSES'} it). Schema validation itself: "
            f"{schema_cpu:.2f} s CPU, {schema_cpu / parse_cpu:.2f} of a parse.",
            END,
        ]
    )


def write(section: str) -> None:
    text = RESULTS.read_text()
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: section, text,
                      flags=re.DOTALL)  # fmt: skip
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--kubeconform", default=shutil.which("kubeconform"))
    parser.add_argument("--before", type=Path, help="a src folder to time detect from too")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitmedic-schema-bench-") as tmp:
        stream = generate(Path(tmp) / "namespace.yaml", args.objects)
        findings = verified(stream)
        schemas = Path(tmp) / "schemas"
        schemas.mkdir()
        times = medians(commands(stream, args.kubeconform, schemas, args.before), args.runs)
    section = report(times, args.objects, args.runs, findings)
    print(section)
    if args.write:
        write(section)
    return 0 if times["detect"][1] / times["parse"][1] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
