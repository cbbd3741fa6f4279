"""gitmedic: an autonomous SRE bot whose every mitigation is a pull request."""

from __future__ import annotations

from functools import cache


# The version comes from git tags (setuptools-scm, at build or install time): vX.Y.Z
# builds X.Y.Z, and anything after a tag is a .devN release of the next version. It is
# looked up on first use (PEP 562): importlib.metadata and the lookup cost about 35 ms
# of every command's start-up, and only --version, init and SARIF need it.
def __getattr__(name: str) -> str:
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gitmedic")
    except PackageNotFoundError:  # a source tree on sys.path that was never installed
        return "0+unknown"
