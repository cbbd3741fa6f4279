"""One escaper for a Markdown table cell (bot/render/markdown.py), held to what GitHub would
show: each cell is rendered as GFM with markdown-it-py (gitmedic's own dependency, tables and
strikethrough on, raw HTML allowed as GitHub allows it) and must be one text cell reading as
the hostile text did, no markup of its own. Then each table that uses it, with the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from gitmedic.bot.memory.architecture import render_architecture
from gitmedic.bot.render.changes import FieldChange, changes_table
from gitmedic.bot.render.markdown import cell
from gitmedic.bot.render.step_summary import to_summary
from gitmedic.detectors.finding import Finding, Resource, Severity
from gitmedic.detectors.snapshot import Snapshot
from gitmedic.reconciler.manifests.load import load_desired

WJ = "\u2060"  # the word joiner after a mention's @
HOSTILE = {
    "pipes": ("x | y || z", "x | y || z"),
    "line breaks": ("a\nb\r\nc\u2028d\n\ne", "a b c d e"),
    "backticks": ("`rm -rf /` and ``x``", "`rm -rf /` and ``x``"),
    "html": (
        "</table><details><img src=x onerror=alert(1)>",
        "</table><details><img src=x onerror=alert(1)>",
    ),
    "hidden marker": ("<!-- gitmedic:control merge -->", "<!-- gitmedic:control merge -->"),
    "entities": ("&lt;b&gt; &#42;x&#42; &amp;", "&lt;b&gt; &#42;x&#42; &amp;"),
    "link and image": (
        "[approve](https://evil.example) ![](https://evil.example/p.png)",
        "[approve](https://evil.example) ![](https://evil.example/p.png)",
    ),
    "autolink": ("<https://evil.example>", "<https://evil.example>"),
    "emphasis": (
        "*b* **s** _e_ __u__ a*b*c ~~gone~~ ~one~",
        "*b* **s** _e_ __u__ a*b*c ~~gone~~ ~one~",
    ),
    "backslashes": ("C:\\tmp\\| end\\", "C:\\tmp\\| end\\"),
    "mentions": (
        "@acme/admins, @bob; mail a@example.com",
        f"@{WJ}acme/admins, @{WJ}bob; mail a@example.com",
    ),
    "mention in code": ("`@acme`", f"`@{WJ}acme`"),
    "bidi": ("abc\u202edcba", "abc\ufffddcba"),
    "names": ("CART_SERVICE_ADDR spec.ports[0] a_b", "CART_SERVICE_ADDR spec.ports[0] a_b"),
}
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _rows(markdown: str) -> list[list[Token]]:
    """The body rows of the one table in ``markdown``: each cell's inline token."""
    tokens = _MD.parse(markdown)
    assert [t.type for t in tokens].count("table_open") == 1, markdown
    rows: list[list[Token]] = []
    in_body = False
    for token in tokens:
        in_body = token.type == "tbody_open" or (in_body and token.type != "tbody_close")
        if in_body and token.type == "tr_open":
            rows.append([])
        if in_body and token.type == "inline":
            rows[-1].append(token)
    return rows


def _text(inline: Token) -> str:
    """What the cell shows, asserting it is text only (no tag, link, code or emphasis)."""
    kinds = {child.type for child in inline.children or []}
    assert kinds <= {"text"}, (inline.content, kinds)
    return "".join(child.content for child in inline.children or [])


@pytest.mark.parametrize(("text", "shown"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_cell_shows_the_text_as_written_and_nothing_else(text: str, shown: str) -> None:
    escaped = cell(text)
    assert "\n" not in escaped and "<" not in escaped
    ((one, after),) = _rows(f"| a | b |\n|---|---|\n| {escaped} | after |\n")
    assert _text(one) == shown
    assert _text(after) == "after"  # nothing of the text reached the next cell


def test_names_stay_readable_in_the_raw_text() -> None:
    """architecture.md is read raw too (by the LLM's read tool): no escape it does not need."""
    assert cell("CART_SERVICE_ADDR spec.ports[0] a_b") == "CART_SERVICE_ADDR spec.ports[0] a_b"
    assert cell("Service shop/catalog: spec.ports[0].targetPort") == (
        "Service shop/catalog: spec.ports[0].targetPort"
    )


def test_an_empty_cell_says_so_and_a_long_one_is_cut() -> None:
    assert cell("") == "-" and cell(" \n ") == "-"
    cut = cell("x" * 300, limit=200)
    assert len(cut) == 200 and cut.endswith("…")


_ALL = " ".join(text for text, _ in HOSTILE.values())


def test_the_step_summary_table_keeps_its_five_cells() -> None:
    finding = Finding(
        detector="service-selector-unmatched",
        rule="service-selector-unmatched",
        severity=Severity.WARNING,
        resource=Resource("Service", "shop", "a"),
        summary=_ALL,
    )
    text = to_summary([finding], [], Snapshot([]), files=1)
    table = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    ((*_, shown),) = _rows(table)
    assert " ".join(shown for _, shown in HOSTILE.values()) in _text(shown)


def test_the_changes_table_keeps_its_four_cells() -> None:
    change = FieldChange("apps/x.yaml", "Deployment web: spec.image", _ALL, "nginx:1.27")
    ((file, field, before, after),) = _rows(changes_table([change]))
    assert _text(field) == "Deployment web: spec.image"
    assert _text(before) == " ".join(shown for _, shown in HOSTILE.values())
    assert (_text(file), _text(after)) == ("apps/x.yaml", "nginx:1.27")


def test_the_architecture_tables_keep_their_cells(tmp_path: Path) -> None:
    image = "nginx:1|<img src=x>`@acme`"
    (tmp_path / "web.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n"
        f"    spec: {{containers: [{{name: web, image: '{image}'}}]}}\n"
    )
    snapshot = load_desired(tmp_path / "web.yaml", namespace="shop").snapshot
    text = render_architecture(snapshot, "0" * 40)
    workloads = text.split("## Workloads", 1)[1].split("##", 1)[0]
    ((name, kind, _, images),) = _rows(workloads)
    assert (_text(name), _text(kind), _text(images)) == (
        "shop/web",
        "Deployment",
        f"nginx:1|<img src=x>`@{WJ}acme`",
    )
