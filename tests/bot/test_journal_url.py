"""Which journal run and serve open, and that a PostgreSQL URL's password is never said."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from gitmedic.bot.common.exits import UsageError
from gitmedic.bot.controller.journal_url import JOURNAL_URL_ENV, open_journal
from gitmedic.reconciler.redact import redact_text
from gitmedic.reconciler.transaction.journal_pg import is_postgres_url, password_of, redact
from gitmedic.reconciler.transaction.journal_store import SqliteStore

SECRET = "s3cr%2Fet-pw-4711"  # percent-encoded in the URL: "s3cr/et-pw-4711" to the server


def _closed_port(unlike: str = "4711") -> int:
    """A port nobody listens on whose number does not carry ``unlike`` (the password's
    digits, which the message must not show: a port like 34711 would say them)."""
    while True:
        with socket.socket() as sock:  # bound, never listening: connecting is refused at once
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if unlike not in str(port):
            return port


def test_without_a_url_the_journal_is_the_state_directorys_sqlite_file(tmp_path: Path) -> None:
    journal = open_journal(tmp_path, {})
    assert isinstance(journal.store, SqliteStore)
    assert journal.path == tmp_path / "journal.sqlite" and journal.path.is_file()


def test_a_url_that_is_not_postgresql_is_refused_with_its_password_redacted(
    tmp_path: Path,
) -> None:
    with pytest.raises(UsageError) as refused:
        open_journal(tmp_path, {JOURNAL_URL_ENV: f"mysql://bot:{SECRET}@db:3306/gitmedic"})
    assert str(refused.value) == (
        f"{JOURNAL_URL_ENV}: mysql://bot:****@db:3306/gitmedic is not a postgresql:// URL"
    )
    assert not (tmp_path / "journal.sqlite").exists(), "no silent fall back to SQLite"


def test_an_unreachable_database_is_bad_input_naming_it_without_its_password(
    tmp_path: Path,
) -> None:
    pytest.importorskip("psycopg")
    port = _closed_port()
    url = f"postgresql://bot:{SECRET}@127.0.0.1:{port}/gitmedic"
    with pytest.raises(UsageError) as refused:
        open_journal(tmp_path, {JOURNAL_URL_ENV: url})
    message = str(refused.value)
    assert message.startswith(
        f"{JOURNAL_URL_ENV}: cannot connect to the journal at "
        f"postgresql://bot:****@127.0.0.1:{port}/gitmedic: "
    )
    assert "s3cr" not in message and "4711" not in message
    # registered before the journal was opened: any later text carrying it is scrubbed
    assert "s3cr/et-pw-4711" not in redact_text("password s3cr/et-pw-4711 leaked")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://bot:{SECRET}@db:5432/j", "postgresql://bot:****@db:5432/j"),
        ("postgres://bot@db/j?sslmode=require", "postgres://bot@db/j?sslmode=require"),
        (f"postgresql://:{SECRET}@db/j", "postgresql://:****@db/j"),
        ("postgresql://db/j", "postgresql://db/j"),
    ],
)
def test_redact_takes_the_password_out_of_the_url(url: str, shown: str) -> None:
    assert is_postgres_url(url)
    assert redact(url) == shown


def test_redact_scrubs_the_password_out_of_a_drivers_message_in_both_spellings() -> None:
    url = f"postgresql://bot:{SECRET}@db/j"
    assert password_of(url) == "s3cr/et-pw-4711"
    said = f"failed for {url} (password s3cr/et-pw-4711)"
    assert redact(url, said) == "failed for postgresql://bot:****@db/j (password ****)"


@pytest.mark.parametrize("target", ["journal.sqlite", "/var/lib/x.db", "postgresql:/x", "http://x"])
def test_only_postgresql_urls_are_postgresql(target: str) -> None:
    assert not is_postgres_url(target)


def test_a_postgresql_journal_makes_the_folder_of_its_local_file(
    tmp_path: Path, postgres_url: str
) -> None:
    # serve keeps each app's local file in a folder of its own (apps/<app>), made by nobody
    # else: the state kept there (verified revisions, pending work) must open at once
    from gitmedic.bot.controller.known_good import VerifiedRevisions

    state = tmp_path / "apps" / "shop"
    journal = open_journal(state, {JOURNAL_URL_ENV: postgres_url})
    assert journal.path == state / "local.sqlite"
    assert VerifiedRevisions(journal).newest_first("shop") == ()
    assert not (state / "journal.sqlite").exists(), "the journal itself is PostgreSQL's"
