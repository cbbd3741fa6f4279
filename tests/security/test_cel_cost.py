"""A learned rule's CEL cost cannot be hidden: measured on the engine's AST, bounded at run time.

CEL skips ``//`` comments, and a text lexer reads a ``// \"\"\"`` pair as one
string: everything between is invisible to a checker that counts tokens. The
attack here is a 1.6 KB rule whose match hides 600 nodes of list concatenation
that way (on the text-based bound it made ``gitmedic detect`` grow past 3 GB
until the allocator gave up). Measured on the checked AST, it is refused before
it runs. A rule that stays under every static bound but is costly at run time
(each step copies long lists) is stopped by the per-evaluation bound of the
child process that evaluates CEL, and ``detect`` says so, naming the rule.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmedic.bot.memory.cel import CelError, Program
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.memory.rules import write_rule

VARIABLES = ("object", "podSpec", "finding")
DEPLOYMENT = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: tuning, namespace: shop}
data: {a: b}
weights: [%s]
"""
RULE = """\
id: learned-weights
description: Weights that cancel out (a ConfigMap's tuning list).
severity: warning
reads: [ConfigMap]
match: |
  has(object.weights) && %s
message: "{kind} {name} has weights that cancel out"
playbooks: [scaled-to-zero]
"""
_SUM = "(" + " + ".join(["x"] * 25) + ")"
HIDDEN = (
    'object.weights.filter(a, a < 4).exists(a, // """ compare each weight\n'
    f"    [object.weights].exists(x, x.exists(b, [{', '.join([_SUM] * 12)}].size() < 0))"
    ' // """ with every other\n  )'
)
_SHORT_SUM = "(" + "+".join(["w"] * 24) + ")"
_SUMS = ",".join([_SHORT_SUM] * 7)
COSTLY = f"[object.weights].exists(w, w.exists(b, [{_SUMS}].size() < 0))"
WEIGHTS = {"object": {"weights": list(range(256))}, "podSpec": {}, "finding": {}}


def test_comments_do_not_change_the_measure() -> None:
    plain = "object.a.exists(x, object.b.exists(y, x == y))"
    commented = 'object.a.exists(x, // """ one\n object.b.exists(y, x == y)) // """ two'
    assert Program(commented, VARIABLES).cost == Program(plain, VARIABLES).cost


def test_nesting_hidden_by_a_comment_is_refused() -> None:
    hidden = '[1].all(a, // """\n [2].all(b, [3].all(c, true)) // """\n)'
    with pytest.raises(CelError, match=r"comprehensions nest 3 deep \(limit 2\)"):
        Program(hidden, VARIABLES)


def test_the_hidden_rule_is_refused_by_its_size() -> None:
    assert len(RULE % HIDDEN) > 1400
    with pytest.raises(CelError, match=r"the expression has \d+ nodes \(limit 400\)"):
        Program(HIDDEN, VARIABLES)


def test_a_concatenated_range_counts_every_item() -> None:
    one = Program("object.a.all(x, true)", VARIABLES).cost.cost
    three = Program("(object.a + object.a + object.a).all(x, true)", VARIABLES).cost.cost
    assert three > 3 * (one - 2)


def test_an_evaluation_over_the_cpu_bound_is_stopped_and_the_next_one_runs() -> None:
    from gitmedic.bot.memory.cel_sandbox import CelSandbox, SandboxFailure

    program = Program(COSTLY, VARIABLES)
    box = CelSandbox(cpu_s=0.2, memory_bytes=4 * 2**30)
    try:
        with pytest.raises(SandboxFailure, match=r"over 0\.2 s of CPU time and was stopped"):
            box.evaluate(program.source, VARIABLES, WEIGHTS)
        assert box.evaluate("1 + 1", VARIABLES, {}) == 2
    finally:
        box.close()


def test_an_evaluation_over_the_memory_bound_is_stopped() -> None:
    from gitmedic.bot.memory.cel_sandbox import CelSandbox, SandboxFailure

    program = Program(COSTLY, VARIABLES)
    box = CelSandbox(cpu_s=60, memory_bytes=256 * 2**20)
    try:
        with pytest.raises(SandboxFailure, match=r"over 256 MiB and was stopped"):
            box.evaluate(program.source, VARIABLES, WEIGHTS)
    finally:
        box.close()


def test_a_failing_expression_is_a_cel_error_not_a_stop() -> None:
    program = Program("object.spec.missing == 1", VARIABLES)
    with pytest.raises(CelError, match="missing"):
        program.evaluate({"object": {"spec": {}}, "podSpec": {}, "finding": {}})


# -- the real command, in a subprocess ----------------------------------------------------


def _repo(tmp_path: Path, match: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    weights = ", ".join(str(i) for i in range(256))
    (repo / "apps" / "tuning.yaml").write_text(DEPLOYMENT % weights)
    write_rule(repo, "weights.yaml", RULE % match)
    init_repo(repo)
    commit_all(repo, "a tuning list and a learned rule")
    return repo


def _detect(repo: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gitmedic", "detect", str(repo / "apps")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc, time.monotonic() - started


@pytest.mark.integration
def test_detect_refuses_the_hidden_rule_at_once(tmp_path: Path) -> None:
    proc, took = _detect(_repo(tmp_path, HIDDEN))

    assert (
        "warning: learned rule not run: .gitmedic/rules/weights.yaml: match: "
        "the expression has" in proc.stderr
    ), proc.stderr
    assert "learned-weights" not in proc.stdout
    assert took < 30


@pytest.mark.integration
def test_detect_stops_a_costly_evaluation_at_its_bound_naming_the_rule(tmp_path: Path) -> None:
    proc, took = _detect(_repo(tmp_path, COSTLY))

    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "learned rule learned-weights failed" in proc.stdout + proc.stderr
    assert ".gitmedic/rules/weights.yaml: the evaluation used over" in proc.stdout + proc.stderr
    assert took < 60


def test_a_comprehension_over_a_comprehension_does_not_multiply() -> None:
    chained = Program("object.a.filter(x, x > 1).map(y, y * 2)", VARIABLES)
    assert chained.cost.nesting == 1


def test_reserved_names_are_read_from_the_tree_not_the_text() -> None:
    with pytest.raises(CelError, match="identifier '__class__' is reserved"):
        Program('object.__class__ // """', VARIABLES)


def test_the_evaluating_child_gets_none_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitmedic.bot.memory.cel_sandbox import CelSandbox

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_planted")
    box = CelSandbox()
    try:
        assert box.evaluate("1 + 1", VARIABLES, {}) == 2
        assert box._proc is not None
        environ = Path(f"/proc/{box._proc.pid}/environ").read_bytes().split(b"\0")
    finally:
        box.close()
    assert sorted(e.split(b"=", 1)[0] for e in environ if e) == [b"PATH", b"PYTHONPATH"]
