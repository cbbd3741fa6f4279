"""gitmedic: an autonomous SRE bot whose every mitigation is a pull request."""

from importlib.metadata import PackageNotFoundError, version

# The version comes from git tags (setuptools-scm, at build or install time): vX.Y.Z
# builds X.Y.Z, and anything after a tag is a .devN release of the next version.
try:
    __version__ = version("gitmedic")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
