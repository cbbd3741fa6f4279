"""Learned detectors load from the repo and run, sandboxed, next to the built-ins."""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.memory.learned import load_learned
from gitmedic.detectors import run_detectors
from gitmedic.detectors.builtin import builtin_registry
from tests.memory.test_sandbox import GOOD, snapshot


def write(repo: Path, name: str, source: str) -> None:
    path = repo / ".gitmedic" / "detectors" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_learned_detectors_run_sandboxed_next_to_the_builtins(tmp_path: Path) -> None:
    write(tmp_path, "zero.py", GOOD)
    write(tmp_path, "bad.py", "import os\n" + GOOD)
    write(tmp_path, "twin.py", GOOD)
    builtin = builtin_registry()
    write(tmp_path, "clash.py", GOOD.replace("learned-zero-replicas", "scaled-to-zero"))

    learned = load_learned(tmp_path, taken=[d.id for d in builtin])

    assert [d.id for d in learned.detectors] == ["learned-zero-replicas"]
    assert learned.detectors[0].spec.playbooks == ("scaled-to-zero",)
    assert learned.refused == (
        ".gitmedic/detectors/bad.py: 1: imports os",
        ".gitmedic/detectors/clash.py: detector id 'scaled-to-zero' is already taken",
        ".gitmedic/detectors/zero.py: detector id 'learned-zero-replicas' is already taken",
    )
    evaluation = run_detectors([*builtin, *learned.detectors], snapshot(0))
    assert "learned-zero-replicas" in {f.detector for f in evaluation.findings}
    assert run_detectors(learned.detectors, snapshot(2)).findings == ()


def test_a_learned_detector_that_fails_at_runtime_is_an_error_entry(tmp_path: Path) -> None:
    # Loads (the probe snapshot is empty), then fails on the first Deployment it reads.
    write(tmp_path, "boom.py", GOOD.replace('obj.spec.get("replicas") == 0', "1 / 0"))
    learned = load_learned(tmp_path)
    evaluation = run_detectors(learned.detectors, snapshot(0))
    assert evaluation.findings == ()
    assert [e.detector for e in evaluation.errors] == ["learned-zero-replicas"]
    assert "ZeroDivisionError" in evaluation.errors[0].message
