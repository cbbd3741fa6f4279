"""Commits that change no semantics: the same objects, written differently or elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from gitmedic.reconciler.git import Git


def restyle(git: Git, files: Sequence[Path]) -> str:
    """Every key sorted, indented by four, every string double-quoted: one commit."""
    for file in files:
        docs = [d for d in yaml.safe_load_all(file.read_text()) if d]
        file.write_text(
            yaml.dump_all(docs, sort_keys=True, indent=4, default_style='"', explicit_start=True)
        )
    return git.commit("style: sorted keys, four spaces, quoted strings", ".")


def split_and_rename(git: Git, files: Sequence[Path], folder: Path) -> str:
    """The objects of ``files`` moved to one file each, ``<kind>-<name>.yaml`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for file in files:
        for doc in [d for d in yaml.safe_load_all(file.read_text()) if d]:
            name = f"{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
            (folder / name).write_text(yaml.safe_dump(doc, sort_keys=False))
        file.unlink()
    return git.commit("layout: one file per object", ".")
