"""A Secret or ConfigMap no commit ever defined is made at runtime; one a revision defined
and the current one lacks is missing (issue 23, item 5; :mod:`gitmedic.sim.defined`).

Unit tests of the rule: what one file defines, what a repository's history defines, and
the pod's fate with each. The loop through the real CLI on Flux's kustomize-helm
example is in tests/repos/test_runtime_secrets.py.
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.detectors.snapshot import Snapshot, Workload
from gitmedic.reconciler.manifests.load import load_desired
from gitmedic.sim.catalog import ImageCatalog
from gitmedic.sim.defined import DefinedObjects, defined_objects, definitions
from gitmedic.sim.fate import Outcome, PodFate, pod_fate
from gitmedic.sim.faults.git import commit_all, init_repo
from gitmedic.sim.history import baseline_catalog

SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: x}\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          env:
            - name: PASSWORD
              valueFrom: {secretKeyRef: {name: db, key: password}}
      volumes:
        - name: certs
          secret: {secretName: %s}
"""


def test_a_file_defines_secrets_configmaps_list_items_and_kustomize_generators() -> None:
    listed = "kind: List\nitems:\n  - {kind: ConfigMap, metadata: {name: listed}}\n"
    kustomization = (
        "kind: Kustomization\nsecretGenerator:\n  - {name: generated}\n"
        "configMapGenerator:\n  - {name: settings}\n"
    )
    assert definitions(SECRET + "---\n" + listed) == {("Secret", "db"), ("ConfigMap", "listed")}
    assert definitions(kustomization) == {("Secret", "generated"), ("ConfigMap", "settings")}
    # a Deployment that references a Secret defines none; a template is not YAML
    assert definitions(DEPLOYMENT % "certs") == set()
    assert definitions("kind: Secret\nmetadata:\n  name: {{ .Release.Name }}\n") == set()


def test_outside_git_nothing_is_known_and_every_absent_object_is_missing(tmp_path: Path) -> None:
    assert defined_objects(tmp_path, None) == DefinedObjects()
    assert not DefinedObjects().made_at_runtime("Secret", "anything")


def test_only_what_ran_and_no_commit_ever_defined_is_made_at_runtime(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app/secret.yaml").write_text(SECRET)
    (tmp_path / "other.yaml").write_text(SECRET.replace("db", "elsewhere"))
    init_repo(tmp_path)
    (tmp_path / "app/secret.yaml").unlink()
    (tmp_path / "other.yaml").unlink()
    head = commit_all(tmp_path, "remove the secrets")
    # what ran: a workload reading each of these (volumes of Secrets, a ConfigMap's key)
    (tmp_path / "ran").mkdir()
    reads = ["db", "elsewhere", "envoy-gateway", "templated"]
    volumes = "\n".join(
        f"        - {{name: v{i}, secret: {{secretName: {n}}}}}" for i, n in enumerate(reads)
    )
    (tmp_path / "ran/web.yaml").write_text(
        (DEPLOYMENT % "db").split("      volumes:")[0].replace("secretKeyRef", "configMapKeyRef")
        + "      volumes:\n"
        + volumes
        + "\n"
    )
    ran = _snapshot(tmp_path / "ran")

    unread = defined_objects(tmp_path / "app", None)
    defined = unread.with_baseline([ran])

    assert defined.head == head
    assert defined.referenced == {("Secret", n) for n in reads} | {("ConfigMap", "db")}
    assert not defined.made_at_runtime("Secret", "db")  # defined, then removed: missing
    assert not defined.made_at_runtime("Secret", "elsewhere")  # whatever path held it
    assert defined.made_at_runtime("Secret", "envoy-gateway")  # a hook's: never defined
    assert defined.made_at_runtime("ConfigMap", "db")  # another kind is another object
    # what no baseline read is judged: a change that reads a Secret nobody made
    assert not unread.made_at_runtime("Secret", "envoy-gateway")
    assert not defined.made_at_runtime("Secret", "new-in-this-commit")
    # what a baseline's render defined counts as defined (a chart's templated name)
    (tmp_path / "rendered").mkdir()
    (tmp_path / "rendered/s.yaml").write_text(SECRET.replace("db", "templated"))
    assert defined.made_at_runtime("Secret", "templated")
    rendered = defined.with_baseline([_snapshot(tmp_path / "rendered")])
    assert not rendered.made_at_runtime("Secret", "templated")
    # as of an earlier commit, a Secret only a later one defined was never defined yet
    (tmp_path / "app/later.yaml").write_text(SECRET.replace("db", "envoy-gateway"))
    commit_all(tmp_path, "a later secret")
    assert defined.made_at_runtime("Secret", "envoy-gateway")
    assert not defined.at_head("HEAD").made_at_runtime("Secret", "envoy-gateway")


def test_a_pod_runs_with_a_runtime_secret_and_fails_on_a_removed_one(tmp_path: Path) -> None:
    """The fate of one Deployment: it mounts ``certs`` (written by a hook: never defined)
    and reads key ``password`` of ``db``; once the commit removing ``db`` is deployed,
    the pod fails on ``db`` alone."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "web.yaml").write_text(DEPLOYMENT % "certs")
    (app / "secret.yaml").write_text(SECRET)
    init_repo(tmp_path)

    healthy = _fate(app)
    assert healthy.mount_error == ""
    assert healthy.containers[0].outcome is Outcome.RUNS

    (app / "secret.yaml").unlink()
    commit_all(tmp_path, "drop the db secret")
    broken = _fate(app)
    assert broken.containers[0].outcome is Outcome.CONFIG_ERROR
    assert broken.containers[0].message == 'secret "db" not found'

    # a volume of a Secret some commit defined and HEAD lacks does not mount either
    (app / "web.yaml").write_text(DEPLOYMENT % "db")
    commit_all(tmp_path, "mount the db secret")
    assert _fate(app).mount_error.endswith(': secret "db" not found')

    # without the history (an in-memory catalogue) the old strict rule holds
    strict = pod_fate(_web(app), _snapshot(app), ImageCatalog(), seed=0)
    assert strict.mount_error.endswith(': secret "db" not found')


def test_a_commit_that_reads_a_secret_nobody_made_is_judged(tmp_path: Path) -> None:
    """The quiet-causes shape: the baseline ran without ``certs``; the commit under
    judgement mounts it and no commit defines it, so the pod cannot mount it."""
    app = tmp_path / "app"
    app.mkdir()
    (app / "web.yaml").write_text((DEPLOYMENT % "db").split("      volumes:")[0])
    (app / "secret.yaml").write_text(SECRET)
    init_repo(tmp_path)
    (app / "web.yaml").write_text(DEPLOYMENT % "certs")
    commit_all(tmp_path, "mount the certificates")

    assert _fate(app).mount_error.endswith(': secret "certs" not found')


def _fate(app: Path) -> PodFate:
    current = _snapshot(app)
    catalog = baseline_catalog(app, None, namespace="default", current=current)
    return pod_fate(_web(app), current, catalog, seed=0)


def _web(app: Path) -> Workload:
    return next(w for w in _snapshot(app).workloads() if w.obj.name == "web")


def _snapshot(path: Path) -> Snapshot:
    return load_desired(path, namespace="default").snapshot
