"""``serve --shard-leases``: its settings, the coordinator's thread and clean stop, and a
serve that cannot reach (or is refused by) the Lease API failing at start, never
serving nothing in silence. The division itself, on a real API server with three
serve processes, is tests/realkube/test_shard_leases.py."""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmedic.bot.service.shards import Shards, ShardSettings, shard_settings
from tests.bot.test_run_every_app import WEB, repo_of
from tests.leases.fake_leases import FakeLeases


def args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"shard_leases": None, "shard_lease_seconds": None, **given})


def test_sharding_is_off_unless_a_namespace_is_given() -> None:
    assert shard_settings(args(), {}) is None


def test_the_flag_wins_over_the_environment() -> None:
    env = {"GITMEDIC_SHARD_LEASES": "env-ns", "GITMEDIC_SHARD_LEASE_SECONDS": "30"}
    assert shard_settings(args(), env) == ShardSettings("env-ns", 30)
    assert shard_settings(args(shard_leases="bots", shard_lease_seconds=9), env) == (
        ShardSettings("bots", 9)
    )
    env["GITMEDIC_SHARD_GROUP"] = "shop-bot"
    assert shard_settings(args(), env) == ShardSettings("env-ns", 30, "shop-bot")


@pytest.mark.parametrize(
    ("given", "env", "why"),
    [
        ({"shard_leases": "Not_A_Namespace"}, {}, "not a namespace name"),
        ({"shard_leases": "bots"}, {"GITMEDIC_SHARD_LEASE_SECONDS": "ten"}, "not a whole"),
        ({"shard_leases": "bots", "shard_lease_seconds": 2}, {}, "too short"),
    ],
)
def test_bad_settings_are_refused(given: dict[str, object], env: dict[str, str], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        shard_settings(args(**given), env)


def test_the_first_round_runs_at_once_and_a_clean_stop_releases_every_lease(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeLeases()
    with caplog.at_level(logging.INFO, logger="gitmedic.bot.service.shards"):
        shards = Shards.of(ShardSettings("bots"), ["shop", "blog"], "h:1:x", bool, api=api)
    assert shards.holds("shop") and shards.holds("blog")
    assert "gitmedic-replica-0 of 1 replicas, 2 of 2 apps (cap 2); took shop, blog" in caplog.text
    assert shards.describe() == (
        "shards: Leases in namespace bots (group gitmedic, holder h:1:x, lease 15 s)"
    )
    shards.stop()  # never started: nothing to join, the Leases still released
    assert {record.holder for record in api.leases.values()} == {""}


def test_a_lease_api_that_fails_at_start_is_an_error_naming_the_namespace() -> None:
    with pytest.raises(ValueError, match="shard leases in namespace bots: connection refused"):
        Shards.of(ShardSettings("bots"), ["shop"], "h", bool, api=FakeLeases(down=True))


@pytest.mark.integration
def test_serve_refuses_to_start_when_the_lease_api_cannot_be_reached(tmp_path: Path) -> None:
    repo = repo_of(
        tmp_path, ["shop"], lambda d, n: (d / "web.yaml").write_text(WEB.format(ns=n, minor=0))
    )
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', "
        "insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    argv = [
        "serve",
        "--forge",
        "local",
        "--cluster",
        "sim",
        "--repo",
        str(repo),
        "--state-dir",
        str(tmp_path / "state"),
        "--shard-leases",
        "bots",
    ]
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "GITMEDIC_WEBHOOK_SECRET": "s"}
    done = subprocess.run(
        [sys.executable, "-m", "gitmedic", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "shard leases in namespace bots: GET /apis/coordination.k8s.io/v1/namespaces/bots/" in (
        done.stderr
    )
    assert "cannot reach the API server" in done.stderr
