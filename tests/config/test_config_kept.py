"""``.gitmedic/config.yaml`` is parsed once per text: every app of a run or of serve reads
it (its settings, the detectors chosen), and with 1,000 apps parsing it each time was
O(apps^2) (bench/apps_scale.py). A changed file is parsed again; a config with an app
``deployed_by`` a manifest reads that file too, so it is never kept."""

from __future__ import annotations

from pathlib import Path

from gitmedic.reconciler.manifests.config_file import load_config

HELMRELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: NS}
spec:
  chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}}
"""


def write_config(repo: Path, text: str) -> Path:
    (repo / ".gitmedic").mkdir(parents=True, exist_ok=True)
    path = repo / ".gitmedic" / "config.yaml"
    path.write_text(text)
    return path


def test_the_same_text_is_parsed_once_and_a_change_is_read(tmp_path: Path) -> None:
    path = write_config(tmp_path, "version: 1\napps:\n  - {name: web, path: web}\n")
    first = load_config(path)
    assert load_config(path) is first
    write_config(tmp_path, "version: 1\napps:\n  - {name: api, path: api}\n")
    assert [a.name for a in load_config(path).apps] == ["api"]


def test_a_config_reading_a_deployer_s_manifest_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "release.yaml").write_text(HELMRELEASE.replace("NS", "web"))
    config = "version: 1\napps:\n  - {name: web, deployed_by: {file: release.yaml, name: web}}\n"
    path = write_config(tmp_path, config)
    assert [a.namespace for a in load_config(path).apps] == ["web"]
    (tmp_path / "release.yaml").write_text(HELMRELEASE.replace("NS", "shop"))
    assert [a.namespace for a in load_config(path).apps] == ["shop"]
