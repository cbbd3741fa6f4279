"""The environment ``kubectl kustomize`` and ``helm template`` run in: no way out.

gitmedic refuses every reference that is not a path of the repository before a
renderer runs (:mod:`.kustomize_refs`, :mod:`.helm`). This is the second wall,
for a field that check missed: the renderer gets a fresh environment, not the
bot's, so

- no proxy, token or cloud credential of the bot's environment is there to use
  (``HTTPS_PROXY``, ``GITHUB_TOKEN``, ``AWS_*``, ...): only ``PATH`` and the locale;
- ``HOME`` and the XDG folders are an empty temporary folder: no ``~/.gitconfig``,
  ``~/.ssh``, ``~/.docker`` or helm config of the user's is read;
- git, which kustomize runs to clone a remote base, may use the ``file`` protocol
  only, runs ``false`` instead of ssh, reads no system or global config (so no
  ``core.sshCommand``, ``credential.helper`` or other config program) and never
  prompts;
- ``KUBECONFIG`` points nowhere.

Only where the user's trusted config allows fetching (``allow_remote_bases``, a
chart pull) are the machine's proxies and git's https kept.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PROXIES", "sandbox_env"]

PROXIES = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")
_KEPT = ("PATH", "LANG", "LC_ALL", "TZ")


def sandbox_env(home: Path, *, network: bool = False) -> dict[str, str]:
    """The whole environment of a renderer whose home is the empty folder ``home``;
    ``network``: the user allowed fetching, so the proxies and git over https stay."""
    keep = {k: os.environ[k] for k in (*_KEPT, *(PROXIES if network else ())) if k in os.environ}
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "KUBECONFIG": os.devnull,
        "GIT_ALLOW_PROTOCOL": "file:https" if network else "file",
        "GIT_SSH_COMMAND": "false",
        "GIT_SSH": "false",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "false",
        "SSH_ASKPASS": "false",
    }
