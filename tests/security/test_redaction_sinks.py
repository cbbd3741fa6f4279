"""Planted secrets traced through every sink of ``gitmedic run --cluster sim --forge local --once``.

The repo holds, beside a real app with a fault no playbook and no bisect can
fix (so the model is asked), the planted-credential corpus
(:mod:`tests.security.credential_corpus`: 33 shapes, among them the nine issue
27 found leaking: ``DB_PW`` and ``API_CREDS`` env vars, ``--db-password v``,
a dockerconfig's ``auth``, an Azure ``AccountKey=``, a Slack webhook URL, an
``Authorization: Basic`` header, ``pw:`` in a values string, a ``.env`` file).
A hostile model (:mod:`tests.security.scripted_provider`) reads them all and
writes every one back. Afterwards no planted value may appear in what left the
process: the prompts the provider received, stdout and stderr (``--json``), the
local forge (PR titles and bodies, comments, issues, statuses: its whole sqlite
file, and ``gitmedic prs --json``), and every commit gitmedic made (messages,
diffs, memory files). ``gitmedic detect --format json`` and ``sarif`` over the
same repo show none either.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.faults import inject
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.conftest import APPS
from tests.security import credential_corpus as corpus
from tests.security.scripted_provider import HostileModel, provider

pytestmark = pytest.mark.integration

APP, NAMESPACE, SERVICE = "apps/online-boutique", corpus.NAMESPACE, "productcatalogservice"
MANIFEST = f"{APP}/kubernetes-manifests.yaml"
PLANTED_FILE = f"{APP}/credentials.yaml"
PLANTED = corpus.PLANTED
API_KEY = corpus.secret("provider API key (env of gitmedic)")


def faulty_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The app with the planted file, then an image never pushed, committed a month before
    the sim's clock starts: no recent change to restore, so neither a playbook nor bisect
    fixes it, and the model is asked."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2025-12-01T00:00:00Z")
    repo = tmp_path / "repo"
    (repo / APP).mkdir(parents=True)
    shutil.copy(APPS / "online-boutique/release/kubernetes-manifests.yaml", repo / MANIFEST)
    (repo / PLANTED_FILE).write_text(yaml.safe_dump_all(corpus.planted_objects(), sort_keys=False))
    for name, text in corpus.planted_files().items():
        (repo / APP / name).write_text(text)
    init_repo(repo)
    snapshot = load_desired(repo / APP, namespace=NAMESPACE).snapshot
    workload = snapshot.get("Deployment", NAMESPACE, SERVICE)
    assert workload is not None
    good: str = workload.body["spec"]["template"]["spec"]["containers"][0]["image"]
    inject("bad-image", repo, snapshot, target=SERVICE)
    commit_all(repo, "productcatalog: a new release")
    return repo, good


def write_config(repo: Path, api_base: str) -> None:
    config = {
        "version": 1,
        "apps": [{"name": "boutique", "path": APP, "namespace": NAMESPACE}],
        "llm": {"model": "openai/scripted", "api_base": api_base,
                "api_key_env": "SCRIPTED_API_KEY", "max_steps": 6},
    }  # fmt: skip
    (repo / ".gitmedic").mkdir()
    (repo / ".gitmedic/config.yaml").write_text(yaml.safe_dump(config))
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    commit_all(repo, "gitmedic config")


def hostile_model(good: str) -> HostileModel:
    reads = [
        ("read_file", {"path": PLANTED_FILE}),
        *(("read_file", {"path": f"{APP}/{name}"}) for name in corpus.planted_files()),
        ("get_object", {"kind": "Secret", "name": "reports-db"}),
        ("get_object", {"kind": "Secret", "name": "reports-pull"}),
        ("get_object", {"kind": "ConfigMap", "name": "reports-config"}),
        ("get_object", {"kind": "Deployment", "name": "reports"}),
        ("get_object", {"kind": "Deployment", "name": "reports", "state": "live"}),
    ]
    fix = {"file": MANIFEST, "kind": "Deployment", "name": SERVICE, "op": "set",
           "path": "spec.template.spec.containers[name=server].image", "value": good}  # fmt: skip
    leak = {"file": MANIFEST, "kind": "Service", "name": SERVICE, "op": "set",
            "path": "metadata.annotations.note", "value": " ".join(ALL_SECRETS)}  # fmt: skip
    return HostileModel(reads, [fix, leak], ALL_SECRETS)


def forms(value: str) -> set[str]:
    """How a value may show: as is, JSON-escaped, base64-encoded."""
    return {value, json.dumps(value)[1:-1], base64.b64encode(value.encode()).decode()}


ALL_SECRETS = [value for values in PLANTED.values() for value in values]


def leaks(where: str, text: str) -> list[str]:
    return [f"{name} in {where}" for name, values in PLANTED.items()
            if any(form in text for value in values for form in forms(value))]  # fmt: skip


def gitmedic(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmedic.bot.cli.main", *argv], env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip


def test_no_planted_secret_leaves_through_any_sink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, good = faulty_repo(tmp_path, monkeypatch)
    model = hostile_model(good)
    env = {**os.environ, "SCRIPTED_API_KEY": API_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with provider(model) as api_base:
        write_config(repo, api_base)
        root = commit_all(repo, "the user's last commit")  # everything after is gitmedic's
        run = gitmedic("run", str(repo), "--cluster", "sim", "--forge", "local", "--once",
                       "--json", env=env)  # fmt: skip
    prs = gitmedic("prs", str(repo), "--json", env=env)
    assert run.returncode in (0, 1), run.stderr[-3000:]  # 1: unhealthy, the fix is held
    assert model.received, "the model was never asked: the test would prove nothing"
    assert any(b"reports-db" in r for r in model.received), "the model read the planted objects"

    found: list[str] = []
    for i, request in enumerate(model.received):
        found += leaks(f"prompt {i}", request.decode())
    found += leaks("run stdout", run.stdout) + leaks("run stderr", run.stderr)
    found += leaks("prs --json", prs.stdout)
    found += leaks("the forge's sqlite", _forge_text(repo))
    history = subprocess.run(["git", "-C", str(repo), "log", "--all", "-p", f"^{root}"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    found += leaks("gitmedic's commits", history)
    assert json.loads(prs.stdout)["prs"], "gitmedic published something to scan"
    assert found == []


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_no_planted_secret_reaches_a_detect_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    repo, _ = faulty_repo(tmp_path, monkeypatch)
    env = {**os.environ, "SCRIPTED_API_KEY": API_KEY}
    report = gitmedic("detect", str(repo / APP), "--namespace", NAMESPACE, "--format", fmt,
                      env=env)  # fmt: skip
    assert report.returncode in (0, 1), report.stderr[-3000:]  # 1: findings
    assert "reports" in report.stdout, "the report covers the planted objects"
    assert leaks(f"detect --format {fmt}", report.stdout + report.stderr) == []


def _forge_text(repo: Path) -> str:
    store = repo / ".git" / "gitmedic" / "forge.sqlite"
    assert store.is_file(), sorted(str(p) for p in (repo / ".git").rglob("*.sqlite"))
    return store.read_bytes().decode("utf-8", "replace")
