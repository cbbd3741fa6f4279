"""pyproject's import contracts checked in process against a grimp graph, and the
import cycles of a graph found module by module.

import-linter's ``acyclic_siblings`` compares the children of each package, so a
cycle between a package's ``__init__`` and one of its own modules is invisible to
it; :func:`cycles` sees every module, TYPE_CHECKING imports included, as
import-linter reads them.
"""

from __future__ import annotations

from collections.abc import Iterator
from copy import deepcopy
from pathlib import Path
from typing import Any

import grimp
from importlinter.api import read_configuration
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.contracts.protected import ProtectedContract
from importlinter.domain.contract import Contract

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
TYPES: dict[str, type[Contract]] = {
    "acyclic_siblings": AcyclicSiblingsContract,
    "forbidden": ForbiddenContract,
    "independence": IndependenceContract,
    "layers": LayersContract,
    "protected": ProtectedContract,
}


def configuration() -> dict[str, Any]:
    """pyproject's session options (with ``root_packages``, as import-linter normalises
    them) and contracts, read by import-linter's public API."""
    read: dict[str, Any] = read_configuration(str(PYPROJECT))
    session = read["session_options"]
    session.setdefault("root_packages", [session.pop("root_package", "gitmedic")])
    return read


def source_graph() -> grimp.ImportGraph:
    session = configuration()["session_options"]
    return grimp.build_graph(
        *session["root_packages"],
        include_external_packages=session.get("include_external_packages") in (True, "True"),
        cache_dir=None,
    )


def contracts() -> Iterator[Contract]:
    read = configuration()
    for given in read["contracts_options"]:
        yield TYPES[given["type"]](
            name=given["name"], session_options=read["session_options"], contract_options=given
        )


def broken(graph: grimp.ImportGraph) -> list[str]:
    """The names of the contracts ``graph`` breaks, in pyproject's order."""
    out = []
    for contract in contracts():
        copy = deepcopy(graph)  # a check may remove the imports it ignores
        if not contract.check(copy, verbose=False).kept:
            out.append(contract.name)
    return out


def cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Every strongly connected set of two or more modules of ``package``, sorted."""
    inside = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in inside_set:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    inside_set = set(inside)
    for module in inside:
        if module not in index:
            visit(module)
    return sorted(found)
