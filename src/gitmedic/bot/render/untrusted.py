"""Text gitmedic did not write, made inert before it reaches a PR, a comment or an issue.

A learned rule's message, a finding's evidence (cluster text), the model's
diagnosis, a commit subject, a policy rule's name: any of them may hold HTML
(``<img src=...>`` loads a tracking pixel when the PR is opened,
``</table><details>`` folds the rest of the body, including the controls, out of
sight), a Markdown image, or ``@team`` (GitHub notifies every member). So each
is escaped the way GitHub renders it back as the same characters:

- ``&`` and ``<`` as HTML entities (no tag, no comment, no entity trick: without
  a ``<`` no tag opens, so ``>`` stays as written and ``a -> b`` reads as itself
  in the raw body too);
- ``![`` as ``!\\[`` (no remote image);
- ``@name`` and ``@org/team`` with a word joiner after the ``@``: shown the same,
  never a mention (inline code and code blocks do not notify, but a fenced
  string can end its fence, so the text is escaped, not fenced).
"""

from __future__ import annotations

import re

_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_WORD_JOINER = "\u2060"


def untrusted(text: str) -> str:
    """``text`` shown as written, with no HTML, image or mention taking effect."""
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace("![", "!\\[")
    return _MENTION.sub("@" + _WORD_JOINER, text)
