"""Every command, option and argument of the CLI says what it is for (``--help``, docs)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from gitmedic.bot.cli.main import build_parser


def undocumented(parser: argparse.ArgumentParser, name: str = "gitmedic") -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            for sub_name, sub in action.choices.items():
                if not helps.get(sub_name):
                    yield f"{name} {sub_name}"
                yield from undocumented(sub, f"{name} {sub_name}")
        elif not action.help and not isinstance(action, argparse._HelpAction):
            yield f"{name} {'/'.join(action.option_strings) or action.dest}"


def test_every_command_and_option_has_help_text() -> None:
    assert list(undocumented(build_parser())) == []


def test_the_check_names_what_lacks_help() -> None:
    parser = argparse.ArgumentParser(prog="x")
    sub = parser.add_subparsers()
    bare = sub.add_parser("bare")
    bare.add_argument("--quiet", action="store_true")
    assert list(undocumented(parser, "x")) == ["x bare", "x bare --quiet"]


def test_path_arguments_complete_file_names() -> None:
    (detect,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    path = next(a for a in detect.choices["detect"]._actions if a.dest == "path")
    assert getattr(path, "complete", None) == {
        "bash": "_shtab_compgen_files",
        "zsh": "_files",
        "tcsh": "f",
    }
