"""Comment commands: ``/gitmedic approve|merge|revert|retry|hold|unhold|explain|help``.

Atlantis's shape: parse, check who asks, look the command up in one map from
name to runner, reply. Rules:

- Only newly created comments act (an edit or a deletion never re-runs a
  command), and never the bot's own comments.
- A command is what GitHub *shows* as one: a line of a top-level paragraph of
  the comment, read as CommonMark (:mod:`.parse`), that starts with
  ``/gitmedic``. Code blocks (fenced, indented, or a fence never closed), HTML
  comments and blocks, block quotes, list items, and lines holding inline code,
  markup or HTML are not commands, since GitHub renders them as code or hides
  them. The command name is case-insensitive.
- The commenter's repository permission (``forge.get_permission``) must be
  write, maintain or admin; ``help`` and ``explain`` need read, and anything
  at all (an unknown name too) needs read. Others get one polite refusal,
  naming the permission needed and theirs; nothing is acted on.
- One reply per comment, however many commands it holds: the first
  :data:`MAX_COMMANDS` known commands run in order, each with its section;
  unknown names are answered once, with the help text. The reply's topic is the
  comment id, so a re-processed delivery finds it and runs nothing again. A
  refusal for lack of permission has the topic of the person instead, so however
  many comments or lines someone without permission posts, one reply answers
  them all.
- A box ticked on the dashboard issue (:mod:`gitmedic.bot.service.dashboard_desk`) is
  a command too: :func:`answer_requests` runs it with the same permission check
  (of the person who ticked it), the same runners and the same refusal.
- ``revert`` passes who asked, where and the words after its name on to the
  revert PR's body (:mod:`gitmedic.bot.render.revert_asked`).
- Nothing is echoed raw: a command name is shown only when it is a plain word,
  and every ``@mention`` in a reply but the commenter's is neutralised, so a
  comment cannot make the bot ping a team or hide text in a marker.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gitmedic.bot.commands.actions import ActionRefused, BotActions
from gitmedic.bot.commands.parse import CommandCall, parse_commands
from gitmedic.bot.render.revert_asked import Asked
from gitmedic.bot.render.templates import fill, prose
from gitmedic.reconciler.forge import BOT_LOGIN, Forge, ForgeError, Permission
from gitmedic.reconciler.forge_markers import extract_topic

__all__ = ["CommandCall", "CommentEvent", "answer_requests", "handle_comment", "parse_commands"]

log = logging.getLogger(__name__)

MAX_COMMANDS = 10  # per comment: a comment of 300 command lines runs 10 and says so
_ALLOWED = (Permission.WRITE, Permission.MAINTAIN, Permission.ADMIN)
_PLAIN_NAME = re.compile(r"[a-z][a-z0-9-]{0,29}")
_MENTION = re.compile(r"(?<![\w`@])@(?P<login>[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:/[\w.-]+)?)")
_WORD_JOINER = "\u2060"  # between "@" and a name: shown the same, never a mention


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
    number: int  # the PR the command acts on
    actor: str = ""  # who asked
    where: str = ""  # where they asked: "in a comment on #7", "on the dashboard"
    args: str = ""  # the words after the command's name


Runner = Callable[[Context], str]


def _help(ctx: Context) -> str:
    return help_text()


RUNNERS: dict[str, Runner] = {
    "approve": lambda ctx: ctx.actions.approve(ctx.number),
    "merge": lambda ctx: ctx.actions.merge(ctx.number),
    "revert": lambda ctx: ctx.actions.revert(ctx.number, Asked(ctx.actor, ctx.where, ctx.args)),
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


def reply_topic(comment_id: int) -> str:
    return f"command:{comment_id}"


def refusal_topic(user: str) -> str:
    return "command-refused:" + (re.sub(r"[^A-Za-z0-9-]", "-", user)[:60] or "someone")


def handle_comment(
    forge: Forge, actions: BotActions, event: CommentEvent, bot_login: str = BOT_LOGIN
) -> list[str]:
    """Run the commands of a new comment; returns the topic of the reply written (or none)."""
    if event.action != "created" or _from_bot(event, bot_login):
        return []
    calls = parse_commands(event.body)
    if not calls:
        return []
    topic = reply_topic(event.comment_id)
    if any(c.topic == topic for c in forge.list_comments(event.number)):
        return []  # a re-processed delivery: this comment was answered
    permission = forge.get_permission(event.author)
    refused = _refused(calls, event.author, permission)
    if refused is not None:
        topic, body = refusal_topic(event.author), refused
    else:
        where = f"in a comment on #{event.number}"
        ctx = Context(forge, actions, event.number, event.author, where)
        body = _reply(ctx, calls, event, permission)
    forge.ensure_comment(event.number, topic, neutralise_mentions(body, event.author))
    return [topic]


def answer_requests(
    forge: Forge,
    actions: BotActions,
    requests: Sequence[tuple[str, int]],
    actor: str,
    where: str = "on the dashboard",
) -> tuple[str | None, str]:
    """Commands asked outside a comment on their PR (the dashboard's boxes: verb and PR),
    checked and run exactly as a comment's. Returns the reply, and the refusal topic when
    ``actor`` may run none of them (``None`` otherwise: the caller names the reply)."""
    calls = [CommandCall(name, "", 0) for name, _ in requests]
    permission = forge.get_permission(actor)
    refused = _refused(calls, actor, permission, "boxes ticked")
    if refused is not None:
        return refusal_topic(actor), neutralise_mentions(refused, actor)
    sections = [
        _section(name, _run(Context(forge, actions, pr, actor, where), name, permission, True), pr)
        for name, pr in requests[:MAX_COMMANDS]
    ]
    if len(requests) > MAX_COMMANDS:
        ignored = len(requests) - MAX_COMMANDS
        sections.append(f"Only the first {MAX_COMMANDS} run at once; {ignored} more were ignored.")
    return None, neutralise_mentions("\n\n".join(sections), actor)


def _refused(
    calls: Sequence[CommandCall],
    author: str,
    permission: Permission,
    others_are: str = "commands of the comment",
) -> str | None:
    """The one refusal when ``author`` may run none of ``calls``; None when they may run some."""
    refused = _first_refused(calls, permission)
    if refused is None:
        return None
    needed = NEEDS.get(refused, Permission.READ)
    others = f" The other {len(calls) - 1} {others_are} did not run either."
    text = refusal(author, refused, needed, permission) + (others * (len(calls) > 1))
    return _section(refused, text)


def _first_refused(calls: Sequence[CommandCall], permission: Permission) -> str | None:
    """The first command the commenter may not use, when they may use none of them."""
    needed = [NEEDS.get(c.name, Permission.READ) for c in calls]
    if any(permission >= n for n in needed):
        return None
    return calls[0].name


def _reply(
    ctx: Context, calls: Sequence[CommandCall], event: CommentEvent, permission: Permission
) -> str:
    known = [c for c in calls if c.name in RUNNERS]
    sections = [
        _section(c.name, _run(replace(ctx, args=c.args), c.name, permission, event.is_pull_request))
        for c in known[:MAX_COMMANDS]
    ]
    if len(known) > MAX_COMMANDS:
        sections.append(
            f"Only the first {MAX_COMMANDS} commands of a comment run; "
            f"{len(known) - MAX_COMMANDS} more were ignored."
        )
    unknown = [c.name for c in calls if c.name not in RUNNERS]
    if unknown:
        sections.append(_unknown(unknown))
    return "\n\n".join(sections)


def _unknown(names: Sequence[str]) -> str:
    shown = next((n for n in names if n and _PLAIN_NAME.fullmatch(n)), "")
    if not any(names):
        return help_text()
    what = f"Unknown command `/gitmedic {shown}`" if shown else "Unknown command"
    more = len(names) - 1
    others = f" (and {more} more unknown command{'s' if more > 1 else ''})" if more else ""
    return f"{what}{others}. {help_text()}"


def _section(name: str, text: str, on: int | None = None) -> str:
    shown = name if _PLAIN_NAME.fullmatch(name) else "…"
    target = f" on #{on}" if on is not None else ""
    return f"> /gitmedic {shown}{target}\n\n{text}".rstrip()


def _run(ctx: Context, name: str, permission: Permission, on_pr: bool) -> str:
    needed = NEEDS[name]
    if permission < needed:
        return refusal(ctx.actor, name, needed, permission)
    if not on_pr and name != "help":
        return f"`/gitmedic {name}` works on pull requests; #{ctx.number} is an issue."
    try:
        return prose(RUNNERS[name](ctx))
    except ActionRefused as exc:
        return prose(str(exc))
    except ForgeError as exc:
        log.warning("command %s on #%s failed: %s", name, ctx.number, exc)
        return prose(f"Sorry, `/gitmedic {name}` failed: {exc}")


def refusal(user: str, name: str, needed: Permission, has: Permission) -> str:
    levels = (
        "read or higher"
        if needed is Permission.READ
        else ", ".join(p.label for p in _ALLOWED[:-1]) + f" or {_ALLOWED[-1].label}"
    )
    command = f"`/gitmedic {name}`" if _PLAIN_NAME.fullmatch(name) else "this command"
    return (
        f"Sorry @{user}, {command} needs {levels} permission on this "
        f"repository, and yours is {has.label}. Nothing was done."
    )


def neutralise_mentions(text: str, commenter: str) -> str:
    """``text`` in which only ``@commenter`` can notify anyone."""

    def keep_or_break(match: re.Match[str]) -> str:
        login = match["login"]
        if login.lower() == commenter.lower():
            return match[0]
        return f"@{_WORD_JOINER}{login}"

    return _MENTION.sub(keep_or_break, text)


def _from_bot(event: CommentEvent, bot_login: str) -> bool:
    return event.author == bot_login or extract_topic(event.body) is not None
