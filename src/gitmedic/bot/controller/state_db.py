"""Tables of the loop's own next to the journal, in its SQLite file (the state database).

What the sim's loop learns while it watches (the revisions it verified healthy,
:mod:`~gitmedic.bot.controller.known_good`) must survive a restart like the journal,
so it lives in the same file, in a table its module owns and creates on first use.
What replicas must share (the images seen healthy) is the journal's own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def state_db(path: Path, schema: str) -> Iterator[sqlite3.Connection]:
    """An autocommit connection to the state database with ``schema`` created."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.executescript(schema)
        yield db
    finally:
        db.close()
