"""Where the real-cluster tier's binaries are, or why they are not there.

``tools/kube/build.sh`` builds them into ``$GITMEDIC_TOOLS/kube-k8s-<key>``,
``kube-flux-<key>`` and ``kube-argocd-<key>``, the key being the first 12 hex
digits of the sha256 of the wrapper module's files; :func:`find_tools` computes
the same key, so a change of a pinned version points the tests at a directory
that does not exist yet (and they skip, naming the build command) rather than
at stale binaries.
etcd and Argo CD's redis are Debian's (``etcd-server``, ``redis-server``), which the
script unpacks into ``$GITMEDIC_TOOLS/kube-debian-<key>`` (the key of
``tools/kube/debian.txt``) without installing them; they are looked for there
first, then on PATH. The control plane is needed by every test of the
tier; Flux only by the Flux loop's, Argo CD only by the Argo loop's
(``flux_missing`` and ``argocd_missing`` say why one is absent, and those tests
skip with that reason).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

WRAPPERS = Path(__file__).parents[2] / "tools" / "kube"
K8S_KEY_FILES = ("tier/go.mod", "tier/go.sum")
FLUX_KEY_FILES = ("tier/go.mod", "tier/go.sum", "tier/gitserver/main.go")
K8S_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
FLUX_BINARIES = ("source-controller", "kustomize-controller", "gitserver")
ARGOCD_KEY_FILES = ("argocd/go.mod", "argocd/go.sum")
ARGOCD_BINARIES = ("argocd", "git-verify-wrapper.sh")
DEBIAN_KEY_FILES = ("debian.txt",)
BUILD_HINT = "run tools/kube/build.sh (about 30 min of CPU on a cold machine)"
ARGOCD_HINT = "run tools/kube/build.sh argocd (about 15 min of CPU on a cold machine)"


@dataclass(frozen=True)
class Tools:
    etcd: Path
    k8s: Path  # bin/ and stage/ (kwok's stage files)
    flux: Path  # bin/ and crds/
    flux_missing: str  # why Flux is not built, or ""
    argocd: Path  # bin/ (argocd, git-verify-wrapper.sh) and crds/
    argocd_missing: str  # why Argo CD (or its redis) is not there, or ""
    redis: Path  # redis-server (meaningful when argocd_missing is "")
    redis_env: dict[str, str]  # what it runs with: the unpacked libraries' folder, or {}

    def bin(self, name: str) -> str:
        folder = self.flux if name in FLUX_BINARIES else self.k8s
        return str(folder / "bin" / name)


def tools_root() -> Path:
    default = Path.home() / ".cache" / "gitmedic-tools"
    return Path(os.environ.get("GITMEDIC_TOOLS") or default)


def cache_key(files: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update((WRAPPERS / name).read_bytes())
    return digest.hexdigest()[:12]


def find_tools() -> Tools | str:
    """The tools, or the reason the tier cannot run on this machine: everything the
    control plane lacks (its build, etcd), and the command that provides it."""
    root = tools_root()
    debian = root / f"kube-debian-{cache_key(DEBIAN_KEY_FILES)}"
    k8s = root / f"kube-k8s-{cache_key(K8S_KEY_FILES)}"
    flux = root / f"kube-flux-{cache_key(FLUX_KEY_FILES)}"
    etcd = debian_binary(debian, "etcd")
    lacking = [_absent(k8s, K8S_BINARIES), "" if etcd else _no_debian(debian, "etcd")]
    if any(lacking):
        return f"{'; '.join(r for r in lacking if r)}: {BUILD_HINT}"
    assert etcd is not None
    argocd = root / f"kube-argocd-{cache_key(ARGOCD_KEY_FILES)}"
    flux_missing = _missing(flux, FLUX_BINARIES)
    redis = debian_binary(debian, "redis-server")
    argocd_missing = _argocd_missing(argocd, flux_missing, redis, debian)
    unpacked = redis is not None and debian in redis.parents  # with its libraries beside it
    redis_env = {"LD_LIBRARY_PATH": str(debian / "lib")} if unpacked else {}
    redis_path = redis or Path("redis-server")
    return Tools(etcd, k8s, flux, flux_missing, argocd, argocd_missing, redis_path, redis_env)


def debian_binary(folder: Path, name: str) -> Path | None:
    """Debian's ``name`` unpacked by the build into ``folder``, else the one on PATH."""
    unpacked = folder / "bin" / name
    if (folder / ".complete").is_file() and unpacked.is_file():
        return unpacked
    found = shutil.which(name)
    return Path(found) if found else None


def _no_debian(folder: Path, name: str) -> str:
    return f"no {name} in {folder} nor on PATH"


def _argocd_missing(folder: Path, flux_missing: str, redis: Path | None, debian: Path) -> str:
    if redis is None:
        return f"{_no_debian(debian, 'redis-server')}: {BUILD_HINT}"
    if flux_missing:  # Argo CD reads the repositories from Flux's build's git server
        return f"Argo CD needs the git server of the Flux build: {flux_missing}"
    return _missing(folder, ARGOCD_BINARIES, ARGOCD_HINT)


def _missing(folder: Path, names: tuple[str, ...], hint: str = BUILD_HINT) -> str:
    absent = _absent(folder, names)
    return f"{absent}: {hint}" if absent else ""


def _absent(folder: Path, names: tuple[str, ...]) -> str:
    if not (folder / ".complete").is_file():
        return f"{folder} is not built"
    absent = [n for n in names if not (folder / "bin" / n).is_file()]
    return f"{folder} lacks {', '.join(absent)}" if absent else ""
