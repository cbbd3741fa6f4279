"""The demo's console: its markup subset, styles only when asked, text from outside literal."""

from __future__ import annotations

import io

import pytest

from gitmedic.bot.cli.console import Console, literal, render


def test_markup_becomes_ansi_styles_that_nest_and_end() -> None:
    assert render("[bold]a[cyan]b[/]c[/]d", color=True) == (
        "\x1b[0m\x1b[1ma\x1b[0m\x1b[1m\x1b[36mb\x1b[0m\x1b[1mc\x1b[0md"
    )


def test_without_color_the_markup_is_dropped() -> None:
    assert render("[dim]t+ 3s[/] [magenta]memory[/] ok", color=False) == "t+ 3s memory ok"


def test_text_from_outside_keeps_its_brackets() -> None:
    commit = "fix [bold] parsing [/] of [x]"
    assert render(f"[dim]{literal(commit)}[/]", color=False) == commit


def test_an_unopened_end_and_an_unclosed_style_are_harmless() -> None:
    assert render("[/]plain", color=True) == "\x1b[0mplain"
    assert render("[bold]open", color=True) == "\x1b[0m\x1b[1mopen\x1b[0m"


def test_a_stream_that_is_not_a_terminal_gets_no_escapes() -> None:
    out = io.StringIO()
    Console(out).print("[bold]gitmedic demo[/]: the shop")
    assert out.getvalue() == "gitmedic demo: the shop\n"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_color_turns_styles_off_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert Console(Tty()).color is False
    monkeypatch.delenv("NO_COLOR")
    assert Console(Tty()).color is True


def test_the_table_pads_columns_to_their_widest_cell() -> None:
    out = io.StringIO()
    Console(out, color=False).table("t", ("story", "PRs"), [("a", "2"), ("(b) [x]", "10")])
    assert out.getvalue().splitlines() == [
        "t",
        "story    PRs",
        "───────  ───",
        "a        2  ",
        "(b) [x]  10 ",
    ]


def test_a_table_without_rows_has_its_header() -> None:
    out = io.StringIO()
    Console(out, color=False).table("t", ("story",), [])
    assert out.getvalue().splitlines() == ["t", "story", "─────"]
