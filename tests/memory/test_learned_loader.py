"""Learned rules load from the repo as data and run next to the built-ins; bad ones are refused."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.memory.learned import MIGRATION, load_learned
from gitmedic.detectors import run_detectors
from gitmedic.detectors.builtin import builtin_registry
from tests.memory.rules import GOOD, snapshot, write_rule


def test_learned_rules_run_next_to_the_builtins_and_bad_ones_are_refused(tmp_path: Path) -> None:
    write_rule(tmp_path, "zero.yaml", GOOD)
    write_rule(tmp_path, "twin.yaml", GOOD)
    write_rule(tmp_path, "clash.yaml", GOOD.replace("learned-zero-replicas", "learned-x"))
    write_rule(
        tmp_path,
        "escape.yaml",
        GOOD.replace("object.spec.replicas == 0", "object.__class__ == 0", 1),
    )
    write_rule(
        tmp_path,
        "open.yaml",
        GOOD.replace("learned-zero-replicas", "learned-open").replace(
            "object.spec.replicas == 0", "open('/etc/passwd') == ''", 1
        ),
    )
    write_rule(
        tmp_path,
        "base.yaml",
        GOOD.replace("learned-zero-replicas", "learned-base").replace(
            "reads:", "refines: no-such-detector\nreads:"
        ),
    )
    builtin = builtin_registry()

    learned = load_learned(tmp_path, builtin)

    assert [d.id for d in learned.detectors] == ["learned-x", "learned-zero-replicas"]
    assert learned.detectors[0].spec.playbooks == ("scaled-to-zero",)
    refused = "\n".join(learned.refused)
    assert (
        ".gitmedic/rules/zero.yaml: detector id 'learned-zero-replicas' is already taken" in refused
    )
    assert ".gitmedic/rules/escape.yaml: match: identifier '__class__' is reserved" in refused
    assert (
        ".gitmedic/rules/open.yaml: match: " in refused
        and "undeclared reference to 'open'" in refused
    )
    assert (
        ".gitmedic/rules/base.yaml: refines 'no-such-detector', which is not a built-in" in refused
    )
    evaluation = run_detectors(learned.registry, snapshot(0))
    zero = [f for f in evaluation.findings if f.detector == "learned-zero-replicas"]
    assert [(f.summary, f.params) for f in zero] == [
        ("Deployment cart has no replicas", {"replicas": 0})
    ]
    assert run_detectors(learned.detectors, snapshot(2)).findings == ()


def test_a_rule_that_fails_at_runtime_is_an_error_entry_naming_its_file(tmp_path: Path) -> None:
    # Compiles (CEL is dynamically typed here), then fails on the first Deployment it reads.
    write_rule(
        tmp_path,
        "boom.yaml",
        GOOD.replace("has(object.spec.replicas) && ", "", 1).replace(
            "object.spec.replicas == 0", "object.spec.missing == 0", 1
        ),
    )
    learned = load_learned(tmp_path, ())
    evaluation = run_detectors(learned.detectors, snapshot(0))
    assert evaluation.findings == ()
    assert [e.detector for e in evaluation.errors] == ["learned-zero-replicas"]
    assert ".gitmedic/rules/boom.yaml: " in evaluation.errors[0].message
    assert "missing" in evaluation.errors[0].message


def test_a_python_detector_of_an_earlier_version_is_refused_with_the_migration(
    tmp_path: Path,
) -> None:
    legacy = tmp_path / ".gitmedic" / "detectors" / "old.py"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("raise SystemExit('never run')\n")
    learned = load_learned(tmp_path, builtin_registry())
    assert learned.detectors == ()
    assert learned.refused == (f".gitmedic/detectors/old.py: {MIGRATION}",)


def test_a_symlinked_rule_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(GOOD)
    link = tmp_path / "repo" / ".gitmedic" / "rules" / "zero.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    learned = load_learned(tmp_path / "repo", ())
    assert learned.detectors == ()
    assert learned.refused == (
        ".gitmedic/rules/zero.yaml: is a symbolic link (or under one); memory files must be files",
    )
