"""Comment commands: ``/gitmedic approve|merge|revert|retry|hold|unhold|explain|help``.

Atlantis's shape: parse, check who asks, look the command up in one map from
name to runner, reply. Rules:

- Only newly created comments act (an edit or a deletion never re-runs a
  command), and never the bot's own comments.
- Commands are read per line: a line that starts with ``/gitmedic`` is a command,
  anything else is ignored (lines inside fenced code blocks too, so quoting the
  help text does nothing). Several commands in one comment run in order, and the
  command name is case-insensitive. ``/gitmedic`` alone or an unknown name gets
  the help text.
- The commenter's repository permission (``forge.get_permission``) must be
  write, maintain or admin; ``help`` and ``explain`` need read. Others get a
  polite refusal naming the permission needed and theirs; nothing is acted on.
- Each command gets one reply through ``forge.ensure_comment`` with a topic of
  the comment id, the command's position and its name: a re-processed delivery
  finds the reply and skips the command, so no command runs twice.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from gitmedic.bot.actions import ActionRefused, BotActions
from gitmedic.bot.render.templates import fill, prose
from gitmedic.reconciler.forge import BOT_LOGIN, Forge, ForgeError, Permission
from gitmedic.reconciler.forge_markers import extract_topic

log = logging.getLogger(__name__)

_COMMAND_LINE = re.compile(r"^/gitmedic(?:\s+(?P<name>\S+))?(?P<args>(?:\s.*)?)$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_ALLOWED = (Permission.WRITE, Permission.MAINTAIN, Permission.ADMIN)


@dataclass(frozen=True)
class CommandCall:
    name: str  # lower case; "" for a bare "/gitmedic"
    args: str
    line: int  # 1-based line number in the comment


@dataclass(frozen=True)
class CommentEvent:
    """A comment as a webhook reports it (``issue_comment``)."""

    action: str  # created | edited | deleted
    number: int  # the PR or issue
    is_pull_request: bool
    comment_id: int
    author: str
    body: str


@dataclass(frozen=True)
class Context:
    forge: Forge
    actions: BotActions
    number: int


Runner = Callable[[Context], str]


def _help(ctx: Context) -> str:
    return help_text()


RUNNERS: dict[str, Runner] = {
    "approve": lambda ctx: ctx.actions.approve(ctx.number),
    "merge": lambda ctx: ctx.actions.merge(ctx.number),
    "revert": lambda ctx: ctx.actions.revert(ctx.number),
    "retry": lambda ctx: ctx.actions.retry(ctx.number),
    "hold": lambda ctx: ctx.actions.hold(ctx.number),
    "unhold": lambda ctx: ctx.actions.unhold(ctx.number),
    "explain": lambda ctx: ctx.actions.explain(ctx.number),
    "help": _help,
}
NEEDS: dict[str, Permission] = {name: Permission.WRITE for name in RUNNERS} | {
    "help": Permission.READ,
    "explain": Permission.READ,
}


def help_text() -> str:
    return fill("help.md").rstrip()


def parse_commands(body: str) -> tuple[CommandCall, ...]:
    calls, fenced = [], False
    for number, raw in enumerate(body.splitlines(), 1):
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        match = None if fenced else _COMMAND_LINE.match(raw.strip())
        if match is not None:
            calls.append(CommandCall((match["name"] or "").lower(), match["args"].strip(), number))
    return tuple(calls)


def reply_topic(comment_id: int, index: int, name: str) -> str:
    safe = re.sub(r"[^a-z0-9-]", "-", name)[:30] or "help"
    return f"command:{comment_id}:{index}:{safe}"


def handle_comment(
    forge: Forge, actions: BotActions, event: CommentEvent, bot_login: str = BOT_LOGIN
) -> list[str]:
    """Run the commands of a new comment; returns the topics of the replies written."""
    if event.action != "created" or _from_bot(event, bot_login):
        return []
    calls = parse_commands(event.body)
    if not calls:
        return []
    answered = {c.topic for c in forge.list_comments(event.number) if c.topic}
    permission = forge.get_permission(event.author)
    ctx = Context(forge, actions, event.number)
    written = []
    for index, call in enumerate(calls, 1):
        topic = reply_topic(event.comment_id, index, call.name)
        if topic in answered:
            continue  # a re-processed delivery: this command already ran
        reply = _run(ctx, call, event, permission)
        forge.ensure_comment(event.number, topic, f"> /gitmedic {call.name}\n\n{reply}".rstrip())
        written.append(topic)
    return written


def _run(ctx: Context, call: CommandCall, event: CommentEvent, permission: Permission) -> str:
    runner = RUNNERS.get(call.name)
    if runner is None:
        unknown = f"Unknown command `/gitmedic {prose(call.name)}`. " if call.name else ""
        return f"{unknown}{help_text()}"
    needed = NEEDS[call.name]
    if permission < needed:
        return refusal(event.author, call.name, needed, permission)
    if not event.is_pull_request and call.name != "help":
        return f"`/gitmedic {call.name}` works on pull requests; #{event.number} is an issue."
    try:
        return runner(ctx)
    except ActionRefused as exc:
        return str(exc)
    except ForgeError as exc:
        log.warning("command %s on #%s failed: %s", call.name, event.number, exc)
        return f"Sorry, `/gitmedic {call.name}` failed: {exc}"


def refusal(user: str, name: str, needed: Permission, has: Permission) -> str:
    levels = (
        "read or higher"
        if needed is Permission.READ
        else ", ".join(p.label for p in _ALLOWED[:-1]) + f" or {_ALLOWED[-1].label}"
    )
    return (
        f"Sorry @{user}, `/gitmedic {name}` needs {levels} permission on this "
        f"repository, and yours is {has.label}. Nothing was done."
    )


def _from_bot(event: CommentEvent, bot_login: str) -> bool:
    return event.author == bot_login or extract_topic(event.body) is not None
