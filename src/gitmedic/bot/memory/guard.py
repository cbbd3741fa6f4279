"""The memory guard: what may be committed under ``.gitmedic/`` (also ``gitmedic memory check``).

Memory is data and prose that steer a bot with write access to production, so
every memory PR (and any human edit) passes the same checks:

- learned rules (``.gitmedic/rules/<id>.yaml``, CEL) are replayed, never trusted:
  see :mod:`.rule_guard` (schema, cost bound, fires on their incident's pre-fix
  snapshot, silent on the post-fix, healthy and legitimate ones, no duplicates);
  a Python learned detector of an earlier version is refused with the migration;
- learned playbooks parse, use placeholders instead of the app's literal object
  names, and are all listed in the index ``.gitmedic/playbooks/README.md``;
- ``.gitmedic/outcomes.jsonl`` only ever grows, one valid record per line;
- ``.gitmedic/architecture.md`` is pinned (front matter) to a commit and a
  topology fingerprint.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from gitmedic.bot.memory.learned import MEMORY as MEMORY  # the memory folder, re-exported
from gitmedic.bot.memory.rule_guard import rule_problems
from gitmedic.bot.responder.playbooks import (
    Playbook,
    PlaybookError,
    builtin_playbooks,
    parse_playbook,
)
from gitmedic.reconciler.git import Git, GitError

LINK_PROBLEM = "a symbolic link: gitmedic does not follow links in the repository"
OUTCOME_KEYS = frozenset(
    {
        "id",
        "commits",
        "detectors",
        "playbooks",
        "strategy",
        "classification",
        "tokens",
        "cost_usd",
        "opened_at",
        "closed_at",
    }
)


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def check_memory(
    repo: Path, *, base_rev: str | None = None, app_names: frozenset[str] = frozenset()
) -> list[Problem]:
    """Every problem of the memory in ``repo`` (empty: it may be committed)."""
    problems = _links(repo)
    if problems:  # nothing is read through a link, not even to report on it
        return problems
    _check_config(repo, problems)
    learned = _check_playbooks(repo, app_names, problems)
    known = {p.id for p in builtin_playbooks()} | {p.id for p in learned}
    problems += [Problem(path, message) for path, message in rule_problems(repo, known)]
    _check_outcomes(repo, base_rev, problems)
    _check_architecture(repo, problems)
    return problems


def _links(repo: Path) -> list[Problem]:
    """Symbolic links in the memory folder: refused, whatever they point at."""
    root = repo / MEMORY
    found = [root] if root.is_symlink() else []
    if not found and root.is_dir():
        found = sorted(p for p in root.rglob("*") if p.is_symlink())
    return [Problem(p.relative_to(repo).as_posix(), LINK_PROBLEM) for p in found]


def _check_config(repo: Path, problems: list[Problem]) -> None:
    from gitmedic.reconciler.config import CONFIG_PATH, ConfigError
    from gitmedic.reconciler.manifests.config_file import load_config

    if (repo / CONFIG_PATH).is_file():
        try:
            load_config(repo / CONFIG_PATH)
        except ConfigError as exc:
            problems.append(Problem(CONFIG_PATH, str(exc).split(":", 1)[-1].strip()))


def _check_playbooks(
    repo: Path, app_names: frozenset[str], problems: list[Problem]
) -> list[Playbook]:
    root = repo / MEMORY / "playbooks"
    index = (root / "README.md").read_text() if (root / "README.md").is_file() else ""
    out = []
    for readme in sorted(root.glob("*/README.md")):
        rel = readme.relative_to(repo).as_posix()
        try:
            book = parse_playbook(readme.read_text(), rel)
        except PlaybookError as exc:
            problems.append(Problem(rel, str(exc).removeprefix(f"{rel}: ")))
            continue
        out.append(book)
        if f"{readme.parent.name}/README.md" not in index:
            problems.append(Problem(f"{MEMORY}/playbooks/README.md", f"does not list {book.id}"))
        literal = sorted(n for n in app_names if re.search(rf"\b{re.escape(n)}\b", _fix_text(book)))
        if literal:
            problems.append(
                Problem(rel, f"names objects literally ({', '.join(literal)}); use placeholders")
            )
    return out


def _fix_text(book: Playbook) -> str:
    if book.fix is None:
        return ""
    return " ".join(
        [*book.fix.paths, *map(str, book.fix.fallback), *map(str, book.fix.fallback.values())]
    )


def _check_outcomes(repo: Path, base_rev: str | None, problems: list[Problem]) -> None:
    rel = f"{MEMORY}/outcomes.jsonl"
    path = repo / rel
    text = path.read_text() if path.is_file() else ""
    if base_rev:
        before = _show(repo, base_rev, rel)
        if not text.startswith(before):
            problems.append(Problem(rel, f"rewrites history: it must only grow from {base_rev}"))
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(rel, f"line {number} is not JSON ({exc.msg})"))
            continue
        missing = (
            sorted(OUTCOME_KEYS - set(record)) if isinstance(record, dict) else ["(an object)"]
        )
        if missing:
            problems.append(Problem(rel, f"line {number} lacks {', '.join(missing)}"))


def _check_architecture(repo: Path, problems: list[Problem]) -> None:
    rel = f"{MEMORY}/architecture.md"
    path = repo / rel
    if not path.is_file():
        return
    text = path.read_text()
    front = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    pinned = (
        front
        and re.search(r"^commit: [0-9a-f]{7,40}$", front[1], re.M)
        and re.search(r"^topology: [0-9a-f]{16,64}$", front[1], re.M)
    )
    if not pinned:
        problems.append(
            Problem(rel, "front matter must pin 'commit: <sha>' and 'topology: <fingerprint>'")
        )


def _show(repo: Path, rev: str, rel: str) -> str:
    try:  # Git.show_file refuses a symbolic link at ``rev``
        return Git(repo).show_file(rev, rel).decode("utf-8", errors="replace")
    except GitError:
        return ""
