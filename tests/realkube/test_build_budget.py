"""``tools/kube/build.sh --budget``: CI's cap on a cold build. A group still building
when the budget runs out is stopped (its whole process tree), the reason is printed,
and the script exits 0 so the tier runs what is built and skips the rest; a build
that fails exits 1. A stand-in ``go`` on PATH plays the slow or broken toolchain."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.realkube.processes import _running  # alive and not a zombie
from tests.realkube.tools import FLUX_KEY_FILES, K8S_KEY_FILES, WRAPPERS, cache_key
from tests.support.postgres import POSTGRES_KEY_FILES

BUDGET_S = 10


def fake_toolchain(tmp_path: Path, go_body: str) -> dict[str, str]:
    """PATH with ``go`` running ``go_body``, an ``etcd`` and a ``redis-server`` (so
    nothing is installed), and PostgreSQL already in the cache (its fetch is the
    journal's, tested on its own): the budget is spent on the groups alone."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("go", go_body), ("etcd", "exit 0"), ("redis-server", "exit 0")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    tools = tmp_path / "tools"
    postgres = tools / f"kube-postgres-{cache_key(POSTGRES_KEY_FILES)}"
    postgres.mkdir(parents=True)
    (postgres / ".complete").touch()
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GITMEDIC_TOOLS": str(tools)}


def build(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(WRAPPERS / "build.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.integration
def test_a_build_past_its_budget_is_stopped_and_says_the_tier_will_skip(tmp_path: Path) -> None:
    """The stand-in build would run for 600 s, ten times ``build``'s own timeout: only
    the budget lets ``build`` return (no wall-clock bound is asserted).

    The budget leaves the stand-in time to start its child: the build runs at nice 19,
    and on a machine at load 12 (session 6's cold .ci/run) a budget of 1 s stopped it
    before its shell had forked, so there was no child to check."""
    marker, pid_file = tmp_path / "still-running", tmp_path / "sleep.pid"
    env = fake_toolchain(tmp_path, f"sleep 600 & echo $! > {pid_file}; wait; touch {marker}")

    done = build(env, "--budget", str(BUDGET_S), "k8s")

    assert done.returncode == 0, done.stderr
    assert f"k8s not built within the budget of {BUDGET_S} s" in done.stderr
    assert "the realkube tier skips what needs it" in done.stderr
    [partial] = [p for p in (tmp_path / "tools").iterdir() if p.name.startswith("kube-k8s-")]
    assert partial.name.endswith(".partial") and not (partial / ".complete").exists()
    assert pid_file.exists(), f"the stand-in build did not start its child in {BUDGET_S} s"
    child = int(pid_file.read_text())
    for _ in range(100):  # the group's TERM reaches the child as the build returns
        if not _running(child):
            break
        time.sleep(0.05)
    assert not _running(child), "the stopped build's children were stopped too"
    assert not marker.exists()


@pytest.mark.integration  # a real build script waits out a real 2 s budget
def test_argo_cd_waits_for_a_group_to_finish_and_gets_what_is_left_of_the_budget(
    tmp_path: Path,
) -> None:
    """Argo CD starts after the tier's own groups: a budget spent on them leaves it
    unstarted, which is said, and the tier skips its tests."""
    marker = tmp_path / "argocd-started"
    env = fake_toolchain(tmp_path, f'case "$PWD" in */argocd) touch {marker};; esac; sleep 30')

    done = build(env, "--budget", "2", "k8s", "argocd")

    assert done.returncode == 0, done.stderr
    assert "k8s not built within the budget of 2 s" in done.stderr
    assert "argocd not built within the budget of 2 s (not started)" in done.stderr
    assert not marker.exists(), "Argo CD's build never started"
    built = [p.name for p in (tmp_path / "tools").iterdir() if "postgres" not in p.name]
    assert built == [f"kube-k8s-{cache_key(K8S_KEY_FILES)}.partial"]


@pytest.mark.integration  # a real build script waits out a real 4 s budget
def test_argo_cd_waits_for_every_group_not_the_first_done(tmp_path: Path) -> None:
    """Flux is present (a warm machine's) and Kubernetes still building: Argo CD does not
    start beside it. Session 7's cold .ci/run started it when Flux was done, and the
    two builds shared the cores until the budget stopped both, so neither finished."""
    marker = tmp_path / "argocd-started"
    env = fake_toolchain(tmp_path, f'case "$PWD" in */argocd) touch {marker};; esac; sleep 30')
    flux = tmp_path / "tools" / f"kube-flux-{cache_key(FLUX_KEY_FILES)}"
    flux.mkdir(parents=True)
    (flux / ".complete").touch()

    done = build(env, "--budget", "4", "k8s", "flux", "argocd")

    assert done.returncode == 0, done.stderr
    assert f"flux present in {flux}" in done.stdout
    assert "k8s not built within the budget of 4 s" in done.stderr
    assert "argocd not built within the budget of 4 s (not started)" in done.stderr
    assert not marker.exists(), "Argo CD's build started beside Kubernetes'"


@pytest.mark.integration  # a real build script waits out a real 4 s budget
def test_flux_builds_after_kubernetes_not_beside_it_whatever_the_order_asked(
    tmp_path: Path,
) -> None:
    """One wrapper module holds both: Flux, built after Kubernetes, finds the packages
    they share compiled (side by side, the two builds compiled them twice). A budget
    that Kubernetes' build spends leaves Flux unstarted, which is said."""
    calls = tmp_path / "go-calls"
    env = fake_toolchain(
        tmp_path, f'echo "$*" >> {calls}; case "$*" in *kube-apiserver*) sleep 30;; esac'
    )

    done = build(env, "--budget", "4", "flux", "k8s")

    assert done.returncode == 0, done.stderr
    assert "k8s not built within the budget of 4 s" in done.stderr
    assert "flux not built within the budget of 4 s (not started)" in done.stderr
    builds = [line for line in calls.read_text().splitlines() if line.startswith("build")]
    assert len(builds) == 1 and "k8s.io/kubernetes/cmd/kube-apiserver" in builds[0]


def test_a_build_that_fails_within_its_budget_exits_1_with_its_log(tmp_path: Path) -> None:
    env = fake_toolchain(tmp_path, 'echo "go: module lookup refused" >&2; exit 1')

    done = build(env, "--budget", "60", "k8s")

    assert done.returncode == 1
    assert "building k8s FAILED" in done.stderr
    assert "go: module lookup refused" in done.stderr


@pytest.mark.parametrize("budget", ["0", "-5", "soon", ""])
def test_a_budget_that_is_not_a_whole_number_of_seconds_is_refused(
    tmp_path: Path, budget: str
) -> None:
    env = fake_toolchain(tmp_path, "exit 0")

    done = build(env, "--budget", budget, "k8s")

    assert done.returncode == 2
    assert "--budget needs a whole number of seconds" in done.stderr
    seeded = [f"kube-postgres-{cache_key(POSTGRES_KEY_FILES)}"]
    assert [p.name for p in (tmp_path / "tools").iterdir()] == seeded, "nothing was built"
