"""Large and hostile inputs for ``gitmedic detect``, shared by the tests that check what
detect answers (tests/cli/test_bad_input.py) and the bench that times it
(bench/bad_input.py), so both see the same bytes."""

from __future__ import annotations

from pathlib import Path

from tests.manifests.helpers import CM

# nine levels of nine aliases: 9**9 strings once expanded, 10 lines of YAML
BOMB = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" + "\n".join(
    ['  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"  {n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    ]
)
HUGE_BYTES = 50 * 1024 * 1024
LATE_TAB_DOCUMENTS = 20_000


def write_huge(folder: Path) -> Path:
    """A folder holding one file of just over 50 MiB of valid ConfigMaps."""
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / "huge.yaml"
    doc = (CM.format(name="x") + "data:\n  k: " + "v" * 1000 + "\n---\n").encode()
    with big.open("wb") as f:
        for _ in range(HUGE_BYTES // len(doc) + 1):
            f.write(doc)
    return folder


def write_bomb(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bomb.yaml").write_text(BOMB)
    return folder


def write_late_tab(folder: Path) -> int:
    """20,000 ConfigMaps then one with a tab; the tab's 1-based line."""
    docs = "---\n".join(
        CM.format(name=f"c{i}") + "data:\n  k: v\n" for i in range(LATE_TAB_DOCUMENTS)
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "large.yaml").write_text(docs + "---\napiVersion: v1\nkind: ConfigMap\n\tx: 1\n")
    return docs.count("\n") + 4


def write_small(folder: Path) -> Path:
    """One ConfigMap: what detect costs with nothing to refuse (start-up and one parse)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cm.yaml").write_text(CM.format(name="a"))
    return folder
