"""gitmedic: an autonomous SRE bot whose every mitigation is a pull request."""

__version__ = "0.1.0"
