"""Learned memory is data: nothing from the repo runs, and a CEL rule cannot express an escape.

The attacks on the Python learned detectors of earlier versions (``__builtins__``,
``attrgetter("__class__.__base__.__subclasses__")``, frame walks, ``import_module``)
need a language with attributes, imports and loops. A rule is CEL over plain
JSON: the escapes do not compile, and what compiles is bounded in cost. A ``.py``
left under ``.gitmedic/detectors/`` is refused with the migration and never read,
by ``gitmedic memory check`` and by the loop alike (driven here as a user runs them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from gitmedic.bot.memory.cel import MAX_LIST, CelError, Program
from gitmedic.bot.memory.learned import MIGRATION, load_learned
from gitmedic.bot.memory.rule import RuleError, load_rule
from gitmedic.detectors import Obj, Resource, Snapshot, run_detectors
from gitmedic.sim.faults.git import commit_all, init_repo
from tests.memory.rules import GOOD, deployment, snapshot, write_rule

VARIABLES = ("object", "podSpec", "finding")
ESCAPES = [
    "object.__class__",
    "object.__class__.__base__.__subclasses__()",
    "__import__('os').system('id')",
    "__builtins__['open']('/etc/passwd')",
    "open('/etc/passwd').read()",
    "getattr(object, 'spec')",
    "importlib.import_module('os')",
    "os.environ",
    "exec('import os')",
    "eval('1 + 1')",
    "[1].map(x, x.__class__)",
    "type(object).__subclasses__()",
    "object.metadata.name.__len__()",
    "lambda: 1",
    "object; 1",
]


@pytest.mark.parametrize("expression", ESCAPES)
def test_an_escape_does_not_compile(expression: str) -> None:
    with pytest.raises(CelError):
        Program(expression, VARIABLES)


def test_an_escape_in_a_rule_file_is_refused_naming_the_file() -> None:
    text = GOOD.replace("object.spec.replicas == 0", "object.__class__ == 0", 1)
    with pytest.raises(RuleError, match=r"^\.gitmedic/rules/x\.yaml: match: identifier"):
        load_rule(text, ".gitmedic/rules/x.yaml")


@pytest.mark.parametrize(
    ("expression", "key"),
    [("object['__cla' + 'ss__']", "__class__"), ("object.spec.gi_frame.f_back", "gi_frame")],
)
def test_a_key_spelled_like_an_attribute_is_only_a_missing_key(expression: str, key: str) -> None:
    # CEL reads maps, not objects: an attribute's name is a key, data, and absent.
    program = Program(expression, VARIABLES)
    with pytest.raises(CelError, match=key):
        program.evaluate({"object": {"spec": {}}, "podSpec": {}, "finding": {}})


@pytest.mark.parametrize(
    "expression",
    [
        "[1].all(a, [2].all(b, [3].all(c, true)))",  # comprehensions nested 3 deep
        " && ".join(["true"] * 300),  # over the token bound
        "'" + "x" * 3000 + "'",  # over the source bound
    ],
    ids=["nested", "tokens", "length"],
)
def test_an_expression_over_the_cost_bound_does_not_compile(expression: str) -> None:
    with pytest.raises(CelError, match="limit"):
        Program(expression, VARIABLES)


def test_input_over_the_bound_disables_the_rule_with_an_error_naming_its_file(
    tmp_path: Path,
) -> None:
    write_rule(tmp_path, "zero.yaml", GOOD)
    learned = load_learned(tmp_path, ())
    huge = deployment(0)
    huge["spec"] = {"replicas": 0, "list": list(range(MAX_LIST + 1))}
    big = Snapshot([Obj(Resource("Deployment", "shop", "big", "apps/v1"), huge), *snapshot(0)])
    evaluation = run_detectors(learned.detectors, big)
    assert evaluation.findings == ()
    [error] = evaluation.errors
    assert error.detector == "learned-zero-replicas"
    assert ".gitmedic/rules/zero.yaml: the input has a list or map of 257 items" in error.message


# -- the real commands, in a subprocess ---------------------------------------------------


def _repo_with_planted_python(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    shop = Path(str(resources.files("gitmedic") / "examples" / "shop"))
    shutil.copytree(shop, repo / "apps" / "shop")
    marker = tmp_path / "marker"
    evil = repo / ".gitmedic" / "detectors" / "evil.py"
    evil.parent.mkdir(parents=True)
    code = f"open({str(marker)!r}, 'w').write('ran')\nimport os\nos.system('touch {marker}')\n"
    evil.write_text(code)
    (evil.parent / "__init__.py").write_text(code)
    (repo / ".gitmedic" / "outcomes.jsonl").write_text("")
    init_repo(repo)
    commit_all(repo, "shop with a planted detector")
    return repo, marker


def _gitmedic(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITMEDIC_")}
    return subprocess.run(
        [sys.executable, "-m", "gitmedic", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.integration
def test_memory_check_refuses_a_python_detector_and_never_runs_it(tmp_path: Path) -> None:
    repo, marker = _repo_with_planted_python(tmp_path)

    result = _gitmedic("memory", "check", str(repo), cwd=tmp_path)

    assert result.returncode == 1, result.stderr
    assert f".gitmedic/detectors/evil.py: {MIGRATION}" in result.stdout
    assert f".gitmedic/detectors/__init__.py: {MIGRATION}" in result.stdout
    assert not marker.exists()


@pytest.mark.integration
def test_the_loop_refuses_a_python_detector_and_never_runs_it(tmp_path: Path) -> None:
    repo, marker = _repo_with_planted_python(tmp_path)
    result = _gitmedic(
        "run",
        str(repo),
        "--path",
        "apps/shop",
        "--namespace",
        "shop",
        "--cluster",
        "sim",
        "--forge",
        "local",
        "--once",
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert f"memory refused: .gitmedic/detectors/evil.py: {MIGRATION}" in result.stderr
    assert not marker.exists()
