"""The corpus is what its index says: every app has its fixtures, licence, provenance, golden."""

from __future__ import annotations

import re

from tests.corpus.golden import CORPUS, GOLDEN, load_apps, load_golden, precision, unjudged

APPS = load_apps()


def test_every_app_has_its_manifests_licence_and_source() -> None:
    for app in APPS:
        assert (app.root / app.path).exists(), f"{app.name}: {app.path} is not in {app.root}"
        assert (app.root / "LICENSE").is_file(), f"{app.name} has no LICENSE"
        source = (app.root / "SOURCE.txt").read_text(encoding="utf-8")
        assert re.search(r"^commit: [0-9a-f]{40}$", source, re.M), f"{app.name}: no pinned commit"
        assert re.search(r"^repository: https://github\.com/\S+$", source, re.M), app.name


def test_the_index_and_the_fixture_folders_agree() -> None:
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders == {app.name for app in APPS}
    assert {p.stem for p in GOLDEN.glob("*.yaml")} == {app.name for app in APPS}


def test_every_critical_and_warning_is_judged() -> None:
    for app in APPS:
        golden = load_golden(app)
        assert golden is not None, f"{app.golden} is missing"
        assert not unjudged(golden), f"{app.golden.name}: {unjudged(golden)}"


def test_precision_of_criticals_is_at_least_95_percent() -> None:
    """The issue's bar, by the goldens' own verdicts (bench/corpus.py --precision prints it)."""
    goldens = {app.name: load_golden(app) or {} for app in APPS}
    result = precision(goldens)
    assert result.ratio >= 0.95, (
        f"{result.true_criticals}/{result.criticals} criticals are true "
        f"({result.ratio:.0%}); false ones:\n" + "\n".join(result.false_criticals)
    )
