"""Print the requirements of gitmedic's core plus the named extras, one a line, read from
pyproject.toml alone (the image's build stage installs them in a layer of their own, so
a new commit, whose version differs, reuses it; the wheel then goes in with --no-deps).

    python3 extras_requirements.py PYPROJECT EXTRA[,EXTRA...]

An extra naming gitmedic itself (``all = ["gitmedic[rules,...]"]``) is expanded; an
unknown extra is an error, not an empty list. Standard library only (Python >= 3.11).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

SELF = re.compile(r"^gitmedic\[(?P<extras>[^\]]+)\]$")


def requirements(project: dict[str, object], extras: list[str]) -> list[str]:
    optional = project.get("optional-dependencies")
    if not isinstance(optional, dict):
        raise SystemExit("extras_requirements: pyproject.toml has no optional-dependencies")
    found: list[str] = [str(r) for r in project.get("dependencies") or []]  # type: ignore[attr-defined]
    seen: set[str] = set()
    todo = list(extras)
    while todo:
        extra = todo.pop(0).strip()
        if extra in seen:
            continue
        seen.add(extra)
        if extra not in optional:
            raise SystemExit(f"extras_requirements: no extra [{extra}] in pyproject.toml")
        for req in optional[extra]:
            inner = SELF.match(req.replace(" ", ""))
            if inner:
                todo.extend(inner["extras"].split(","))
            elif req not in found:
                found.append(req)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: extras_requirements.py PYPROJECT EXTRA[,EXTRA...]", file=sys.stderr)
        return 2
    data = tomllib.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print("\n".join(requirements(data["project"], argv[1].split(","))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
