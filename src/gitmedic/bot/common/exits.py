"""What every command returns or raises: the exit codes and the usage error.

Below the command line (:mod:`gitmedic.bot.cli`) and every command: they raise
:class:`UsageError` and return the codes, and the command line that dispatches
to them prints and maps them. The codes are a contract (scripts and CI read them).
"""

from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer killed by it


class UsageError(Exception):
    """Bad input from the command line: printed as ``gitmedic: error: ...``, exit 2."""
