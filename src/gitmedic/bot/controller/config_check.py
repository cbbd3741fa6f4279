"""A repo's ``.gitmedic/config.yaml`` checked before a command changes anything.

``run`` and ``init`` both refuse a config that does not load, naming each problem with
its file and line (:func:`gitmedic.reconciler.manifests.config_file.load_config`), as a
usage error: bad input said as such, before the forge's files or the scaffold are
written, never an internal error.
"""

from __future__ import annotations

from pathlib import Path

from gitmedic.bot.common.exits import UsageError


def check_config(repo: Path, hint: str = "") -> None:
    """Raise :class:`UsageError` when ``repo`` has a config that does not load; ``hint``
    (what the user can do about it) ends the message."""
    from gitmedic.reconciler.config import ConfigError, find_config
    from gitmedic.reconciler.manifests.config_file import load_config

    found = find_config(repo)
    if found is None:
        return
    try:
        load_config(found)
    except ConfigError as exc:
        raise UsageError(f"{exc}\n{hint}" if hint else str(exc)) from None
