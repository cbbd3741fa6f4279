"""Running an untrusted (learned) detector: a subprocess with limits and no way out.

Layers, each enough to stop the usual mistakes and together a real barrier:
the AST check (see :mod:`ast_check`) before anything runs; a fresh interpreter
(``-I``: no site, no user paths, no environment) with CPU, address-space and
file-size limits; an audit hook that refuses sockets, subprocesses, writes and
imports outside the allowlist (and the module's own ``__import__`` refusing
them too, as the audit event misses modules loaded already, such as ``os``);
and, where the machine allows it, a network namespace of its own (``unshare
--net``). The snapshot goes in on stdin as JSON, findings come out on stdout as
JSON. :mod:`.worker` is the same sandbox kept alive across runs (the monitor's).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmedic.detectors.finding import Finding
from gitmedic.detectors.snapshot import Snapshot

TIME_LIMIT_S = 10
MEMORY_LIMIT_BYTES = 512 * 1024 * 1024

# The audit hook both the one-shot runner and the persistent worker (:mod:`.worker`)
# install once they have loaded what they need, and the builtins a detector module
# runs with (its imports checked even when the module is loaded already).
HOOK = r"""
ALLOWED = {allowed!r}
def hook(event, args):
    if event in ("socket.__new__", "socket.connect", "socket.bind", "subprocess.Popen",
                 "os.system", "os.exec", "os.posix_spawn", "os.fork", "ctypes.dlopen",
                 "os.remove", "os.rename", "shutil.rmtree", "urllib.Request",
                 "resource.setrlimit", "resource.prlimit"):
        raise PermissionError("a learned detector may not use " + event)
    if event == "open" and args[1] not in (None, "r", "rb") and not str(args[0]).endswith(".pyc"):
        raise PermissionError("a learned detector may not write files")
    if event == "import" and args[0].split(".")[0] not in ALLOWED:
        raise PermissionError("a learned detector may not import " + args[0])
import builtins
def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    # The "import" audit event fires only for modules not loaded yet (os, sys are):
    # the module's own __import__ checks every import it makes.
    if level != 0 or name.split(".")[0] not in ALLOWED:
        raise PermissionError("a learned detector may not import " + ("." * level + name))
    return builtins.__import__(name, globals, locals, fromlist, level)
SAFE_BUILTINS = dict(vars(builtins), __import__=guarded_import)
"""

# A detector run as JSON: its id, playbooks, SPEC fields and findings.
RESULT = r"""
def result(det, found):
    s = det.spec
    spec = {"id": s.id, "description": s.description, "kinds": sorted(s.kinds),
            "severity": s.severity.value, "remediation": s.remediation, "scope": s.scope.value,
            "playbooks": list(s.playbooks), "fire_after": s.fire_after,
            "clear_after": s.clear_after}
    return {"id": det.id, "playbooks": list(s.playbooks), "spec": spec,
            "findings": [f.to_json() for f in found]}
"""

_RUNNER = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
sys.path.insert(0, {pkg_root!r})
import gitmedic.detectors as sdk
import gitmedic.detectors.builtin  # loaded before the hook: learned detectors may refine them
from gitmedic.detectors.snapshot import Mode, Obj, Snapshot
from gitmedic.detectors.finding import Resource
from gitmedic.detectors.registry import from_module
import importlib.util
spec = importlib.util.spec_from_file_location("learned_detector", {path!r})
module = importlib.util.module_from_spec(spec)
source = open({path!r}).read()
payload = json.loads(sys.stdin.read())
{hook}{result}sys.addaudithook(hook)
code = compile(source, {path!r}, "exec")
module.__dict__["__builtins__"] = SAFE_BUILTINS
exec(code, module.__dict__)
det = from_module(module)
objs = [Obj(Resource(o["kind"], o["namespace"], o["name"], o["apiVersion"]), o["body"])
        for o in payload["objects"]]
found = list(det.detect(Snapshot(objs, mode=Mode(payload["mode"]))))
print(json.dumps(result(det, found)))
"""


class SandboxError(Exception):
    """The detector failed, overran its limits, or tried something it may not."""


@dataclass(frozen=True)
class SandboxRun:
    detector_id: str
    playbooks: tuple[str, ...]
    findings: tuple[Finding, ...]
    spec: Mapping[str, Any] = field(default_factory=dict)  # the SPEC's fields, as JSON


# Modules a learned detector (and the SDK it calls) may import once the hook is in.
ALLOWED_IMPORTS = (
    "gitmedic", "json", "resource", "importlib", "encodings", "collections", "re", "math",
    "itertools", "functools", "dataclasses", "typing", "enum", "ipaddress", "fnmatch",
    "string", "operator", "hashlib", "abc", "types", "copy", "__future__", "signal",
    "threading", "time", "contextlib", "weakref", "keyword", "reprlib", "sre_compile",
    "sre_parse", "sre_constants", "_collections_abc", "warnings", "linecache", "tokenize",
    "token",
)  # fmt: skip


def run_sandboxed(
    path: Path, snapshot: Snapshot, *, time_limit_s: float = TIME_LIMIT_S
) -> SandboxRun:
    """One run of the module at ``path`` on ``snapshot`` in a fresh sandboxed interpreter."""
    script = _RUNNER.format(
        mem=MEMORY_LIMIT_BYTES,
        cpu=int(time_limit_s) + 1,
        pkg_root=package_root(),
        path=str(path.resolve()),
        hook=audit_hook(),
        result=RESULT,
    )
    try:
        proc = subprocess.run(
            sandbox_command(script),
            input=json.dumps(snapshot_payload(snapshot)),
            capture_output=True,
            text=True,
            timeout=time_limit_s,
            env={"PATH": os.defpath},
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(f"{path.name}: ran past its time limit of {time_limit_s:g}s") from None
    if proc.returncode != 0:
        raise SandboxError(f"{path.name}: {last_error(proc.stderr, proc.returncode)}")
    return run_from_json(json.loads(proc.stdout.strip().splitlines()[-1]))


def package_root() -> str:
    import gitmedic

    return str(Path(gitmedic.__file__).parent.parent)


def audit_hook() -> str:
    return HOOK.format(allowed=sorted(ALLOWED_IMPORTS))


def sandbox_command(script: str) -> list[str]:
    """The isolated interpreter running ``script``, in its own network namespace if we can."""
    command = [sys.executable, "-I", "-c", script]
    return ["unshare", "--net", "--", *command] if _can_unshare_net() else command


def snapshot_payload(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "mode": snapshot.mode.value,
        "objects": [
            {
                "kind": o.kind,
                "namespace": o.namespace,
                "name": o.name,
                "apiVersion": o.ref.api_version,
                "body": o.body,
            }
            for o in snapshot
        ],
    }


def run_from_json(out: Mapping[str, Any]) -> SandboxRun:
    findings = tuple(Finding.from_json(f) for f in out["findings"])
    return SandboxRun(out["id"], tuple(out["playbooks"]), findings, out["spec"])


def last_error(stderr: str, code: int) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if code < 0:
        return f"killed by signal {-code} (CPU or memory limit)"
    if lines and "MemoryError" in lines[-1]:
        return "exceeded its memory limit"
    return lines[-1] if lines else f"exited with status {code}"


_UNSHARE: bool | None = None


def _can_unshare_net() -> bool:
    global _UNSHARE
    if _UNSHARE is None:
        tool = shutil.which("unshare")
        _UNSHARE = (
            bool(tool)
            and subprocess.run(
                [str(tool), "--net", "--", "true"], capture_output=True, check=False
            ).returncode
            == 0
        )
    return _UNSHARE
