"""The whole tier (control plane + Flux + Argo CD), started once and shared by every pytest
process of a run (``pytest -n auto`` has one per core).

The first process to arrive starts it under a file lock and records where it is
(``tier.json``) and who uses it (``users``); the others attach. The last one to
leave stops every recorded pid. The servers run in their own sessions, so they
outlive the process that started them while another still uses them.
``python -m tests.realkube.tier FOLDER`` starts one by hand and prints its
admin kubeconfig; ``--stop FOLDER`` stops it.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.realkube.argocd import ArgoCD, start_argocd
from tests.realkube.control_plane import ControlPlane, start_control_plane
from tests.realkube.flux import Flux, start_flux
from tests.realkube.pki import Pki
from tests.realkube.processes import Processes, stop_recorded
from tests.realkube.tools import Tools


@dataclass(frozen=True)
class Tier:
    plane: ControlPlane
    flux: Flux | str  # Flux, or why it is not running (not built)
    argocd: ArgoCD | str  # Argo CD, or why it is not running (ARGOCD_FAILED: it broke)
    started_in_s: float  # 0.0 for a process that attached to a running tier


# Argo CD built but not starting fails its tests (a skip would hide it) and only them
ARGOCD_FAILED = "Argo CD did not start: "


def start_tier(tools: Tools, folder: Path) -> Tier:
    began = time.monotonic()
    procs = Processes(folder)
    try:
        plane = start_control_plane(tools, folder, procs)
        flux = tools.flux_missing or start_flux(tools, plane, folder, procs)
        argocd = tools.argocd_missing or _start_argocd(tools, plane, folder, procs)
    except BaseException:
        stop_recorded(folder)
        raise
    return Tier(plane, flux, argocd, time.monotonic() - began)


def _start_argocd(
    tools: Tools, plane: ControlPlane, folder: Path, procs: Processes
) -> ArgoCD | str:
    try:
        return start_argocd(tools, plane, folder, procs)
    # whatever broke (a server that exited, a CRD never established, a refused
    # login) fails the Argo CD tests with the reason; its processes stop with the tier
    except Exception as err:
        return f"{ARGOCD_FAILED}{type(err).__name__}: {err}"


@contextmanager
def shared_tier(tools: Tools, folder: Path) -> Iterator[Tier]:
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder):
        users = _users(folder)
        if users == 0:
            stop_recorded(folder / "run")  # what a runner that died left behind
            shutil.rmtree(folder / "run", ignore_errors=True)
            tier = start_tier(tools, folder / "run")
            (folder / "tier.json").write_text(json.dumps(_to_json(tier)))
        else:
            tier = _from_json(json.loads((folder / "tier.json").read_text()))
        (folder / "users").write_text(str(users + 1))
    try:
        yield tier
    finally:
        with _locked(folder):
            users = _users(folder) - 1
            (folder / "users").write_text(str(users))
            if users == 0:
                stop_recorded(folder / "run")


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _users(folder: Path) -> int:
    path = folder / "users"
    return int(path.read_text() or 0) if path.exists() else 0


def _to_json(tier: Tier) -> dict[str, object]:
    plane = {**asdict(tier.plane), "folder": str(tier.plane.folder)}
    plane["pki"] = {"folder": str(tier.plane.pki.folder), "tokens": tier.plane.pki.tokens}
    flux: object = tier.flux
    if isinstance(tier.flux, Flux):
        flux = {"git_url": tier.flux.git_url, "docroot": str(tier.flux.docroot)}
    argocd: object = tier.argocd
    if isinstance(tier.argocd, ArgoCD):
        argocd = {"url": tier.argocd.url, "token": tier.argocd.token}
    return {"plane": plane, "flux": flux, "argocd": argocd}


def _from_json(data: dict[str, Any]) -> Tier:
    plane_data = data["plane"]
    pki_data = plane_data["pki"]
    assert isinstance(pki_data, dict)
    pki = Pki(Path(pki_data["folder"]), dict(pki_data["tokens"]))
    plane = ControlPlane(
        str(plane_data["server"]), str(plane_data["etcd"]), pki, Path(str(plane_data["folder"]))
    )
    found = data["flux"]
    flux = (
        found
        if isinstance(found, str)
        else Flux(str(found["git_url"]), Path(str(found["docroot"])), plane)
    )
    found = data["argocd"]
    argocd = (
        found if isinstance(found, str) else ArgoCD(str(found["url"]), str(found["token"]), plane)
    )
    return Tier(plane, flux, argocd, 0.0)


def main(argv: list[str]) -> int:
    from tests.realkube.tools import find_tools

    if argv[:1] == ["--stop"]:
        stop_recorded(Path(argv[1]))
        return 0
    tools = find_tools()
    if isinstance(tools, str):
        print(tools, file=sys.stderr)
        return 2
    tier = start_tier(tools, Path(argv[0]).resolve())
    print(f"started in {tier.started_in_s:.1f} s; export KUBECONFIG={tier.plane.kubeconfig}")
    if isinstance(tier.flux, str):
        print(f"no Flux: {tier.flux}")
    else:
        print(f"git server: {tier.flux.git_url} (serving {tier.flux.docroot})")
    if isinstance(tier.argocd, str):
        print(f"no Argo CD: {tier.argocd}")
    else:
        print(f"Argo CD: {tier.argocd.url} (the bot's token: {tier.argocd.token})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
