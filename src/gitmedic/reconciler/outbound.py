"""The seams where text leaves the process, each scrubbed by :func:`~.redact.redact_text`.

One seam per kind of sink, so that a new call site cannot forget it:

- a forge: :func:`scrubbed_forge` decorates each adapter class; every writing
  verb redacts its human text (titles, bodies, comments, status descriptions,
  commit messages) before the adapter sees it. The bot's hidden state is left
  alone (identifiers the bot reads back), and so are the files of a commit: they
  are the user's manifests (what the model may write into them is redacted where
  it comes in, :mod:`gitmedic.bot.responder.llm`);
- the process's own output: :class:`ScrubbingStream` wraps stdout and stderr
  for the whole of a CLI command (``--json`` reports, tables, tracebacks,
  anything logged to the console), a line at a time so a value split across
  two writes is still whole when it is scrubbed.

The LLM provider call and the logging handlers have their own single seams
(:mod:`gitmedic.bot.responder.llm`, :class:`~.redact.RedactingFilter`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TextIO, TypeVar

from gitmedic.reconciler.redact import redact_text

# The forge verbs that publish text, and their parameters that hold it.
OUTBOUND_TEXT: dict[str, tuple[str, ...]] = {
    "ensure_pr": ("title", "body"),
    "ensure_comment": ("body",),
    "ensure_issue": ("title", "body"),
    "set_status": ("description",),
    "commit_files": ("message",),
}
SCRUBBED = "__gitmedic_scrubbed__"

C = TypeVar("C", bound=type)


def scrubbed_forge(cls: C) -> C:
    """A forge adapter class whose writing verbs redact their text arguments first."""
    for verb, params in OUTBOUND_TEXT.items():
        setattr(cls, verb, _scrubbing(getattr(cls, verb), params))
    setattr(cls, SCRUBBED, True)
    return cls


def _scrubbing(method: Callable[..., Any], params: tuple[str, ...]) -> Callable[..., Any]:
    signature = inspect.signature(method)

    @functools.wraps(method)
    def verb(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        for name in params:
            if isinstance(bound.arguments.get(name), str):
                bound.arguments[name] = redact_text(bound.arguments[name])
        return method(*bound.args, **bound.kwargs)

    return verb


class ScrubbingStream:
    """A text stream that redacts each line before it reaches the stream it wraps."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        complete, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self.inner.write(redact_text(complete + newline))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.inner.write(redact_text(self._pending))
            self._pending = ""
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno...: the inner stream's
        return getattr(self.inner, name)
