"""What a starting ``run`` or ``serve`` acts on, said in one line, and the one pairing it
refuses: a real forge with the simulated cluster.

With ``--forge github`` every fix is a pull request on a real repository; judging
those fixes by a simulated cluster would merge and revert real changes on made-up
evidence. So ``--forge github`` takes ``--cluster kube``, the default with it, and
``--cluster sim`` with it is refused, whatever the GitHub API's address (a tunnel
to the real GitHub may listen on 127.0.0.1): the tests that pair a stand-in GitHub
with the sim pass a forge object in-process (:func:`gitmedic.bot.cli.run.run_on`,
:func:`gitmedic.bot.service.wiring.wire`), which no flag or setting reaches. The
start line names forge, repository,
cluster and kubeconfig context, engines and apps, so a log says which world the
process acted in.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import yaml

from gitmedic.bot.common.exits import UsageError

__all__ = ["check_cluster_for_forge", "kube_context", "start_line"]

MAX_WHY = 160  # characters of why an app is not deployable, in the one line


class _Started(Protocol):
    """What the line reads of a loop (:class:`gitmedic.bot.controller.loop.Loop`)."""

    @property
    def config(self) -> object: ...

    @property
    def cluster(self) -> object: ...


def check_cluster_for_forge(forge: str, cluster: str | None) -> str:
    """The cluster to use: ``kube`` with a real forge (refusing ``sim``), else ``sim``."""
    if forge == "github":
        if cluster == "sim":
            raise UsageError(
                "--forge github needs --cluster kube: a fix on a real repository is judged "
                "by the real cluster, never by the simulated one"
            )
        return cluster or "kube"
    return cluster or "sim"


def start_line(
    forge: str,
    forge_obj: object,
    repo: Path,
    cluster: str,
    loops: Sequence[_Started],
    env: Mapping[str, str] | None = None,
    *,
    apps: Sequence[object] | None = None,
    broken: Mapping[str, str] | None = None,
) -> str:
    """``apps``: every app's settings (``app``, ``namespace``) in the config's order, those
    the process cannot deploy (``broken``: app -> why) marked so; default, the loops'."""
    env = os.environ if env is None else env
    repository = getattr(forge_obj, "repo_name", "") or env.get("GITHUB_REPOSITORY", "")
    repository = repository if forge == "github" and repository else str(repo)
    context = f" (context {kube_context(env) or 'in-cluster'})" if cluster == "kube" else ""
    engines = sorted({str(getattr(loop.cluster, "engine_name", "") or "?") for loop in loops})
    every = list(apps) if apps is not None else [loop.config for loop in loops]
    listed = ", ".join(_app(config, broken or {}) for config in every) or "none"
    return (
        f"gitmedic: starting: forge {forge} ({repository}), cluster {cluster}{context}, "
        f"engine {', '.join(engines) or '?'}, {len(every)} app{'s' * (len(every) != 1)}: {listed}"
    )


def _app(config: object, broken: Mapping[str, str]) -> str:
    name = str(getattr(config, "app", "?"))
    namespace = getattr(config, "namespace", "?")
    if name not in broken:
        return f"{name} ({namespace})"
    return f"{name} ({namespace}; not deployable: {_why(broken[name])})"


def _why(error: str) -> str:
    """The reason without its remedy (said on the app's own line): one line, not a page."""
    first = " ".join(error.split("; ", 1)[0].split())
    return first if len(first) <= MAX_WHY else first[: MAX_WHY - 1] + "…"


def kube_context(env: Mapping[str, str]) -> str:
    """The kubeconfig's current context, as the Kubernetes client would pick it ('' when
    there is no kubeconfig: the in-cluster service account)."""
    paths = env.get("KUBECONFIG") or str(Path(env.get("HOME", "~"), ".kube", "config"))
    for path in paths.split(os.pathsep):
        try:
            data = yaml.safe_load(Path(path).expanduser().read_text())
        except (OSError, yaml.YAMLError, ValueError):
            continue
        if isinstance(data, dict) and data.get("current-context"):
            return str(data["current-context"])
    return ""
