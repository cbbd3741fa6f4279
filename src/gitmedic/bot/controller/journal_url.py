"""Which journal ``run`` and ``serve`` open: the state directory's SQLite file, or the
PostgreSQL database ``GITMEDIC_JOURNAL_URL`` names (more than one replica).

The URL's password is registered with the redaction registry before the journal is
opened, so no log line or comment can carry it, and every message here names the
URL with its password replaced by ``****``. A URL that is not ``postgresql://`` or
a database that cannot be reached is bad input (exit 2), never a silent fall back
to SQLite: replicas that each wrote their own file would each think they held the
lease.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.common.extras import require
from gitmedic.reconciler.redact import REGISTRY
from gitmedic.reconciler.transaction import Journal
from gitmedic.reconciler.transaction.journal_pg import is_postgres_url, password_of, redact
from gitmedic.reconciler.transaction.journal_store import JournalUnavailable

JOURNAL_URL_ENV = "GITMEDIC_JOURNAL_URL"
SQLITE_FILE = "journal.sqlite"
# what each replica keeps for itself beside a PostgreSQL journal (the sim's known-good)
LOCAL_FILE = "local.sqlite"


def require_driver(environ: Mapping[str, str] = os.environ) -> None:
    """At a command's start: a PostgreSQL journal needs the [postgres] extra (the CLI
    names it), checked before any work rather than at the first app's journal."""
    if environ.get(JOURNAL_URL_ENV, "").strip():
        require("psycopg")


def open_journal(state: Path, environ: Mapping[str, str] = os.environ) -> Journal:
    return _opened(environ, state) or Journal(state / SQLITE_FILE)


def shared_journal(environ: Mapping[str, str] = os.environ) -> Journal | None:
    """The PostgreSQL journal replicas share, opened for what serve's webhook side records
    there (the deliveries any replica accepted); None with the default SQLite, where one
    replica runs and its own files are the whole record."""
    return _opened(environ, None)


def _opened(environ: Mapping[str, str], state: Path | None) -> Journal | None:
    """The URL's journal (its local file in ``state``), or None when no URL is set."""
    url = environ.get(JOURNAL_URL_ENV, "").strip()
    if not url:
        return None
    REGISTRY.add(password_of(url))
    if not is_postgres_url(url):
        raise UsageError(f"{JOURNAL_URL_ENV}: {redact(url)} is not a postgresql:// URL")
    try:
        return Journal(url, local=None if state is None else state / LOCAL_FILE)
    except JournalUnavailable as exc:
        raise UsageError(f"{JOURNAL_URL_ENV}: {exc}") from None
