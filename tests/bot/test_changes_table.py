"""The changed-fields table of a fix PR: before read from the base, hostile values inert."""

from __future__ import annotations

from gitmedic.bot.render.changes import FieldChange, changes_table, field_changes
from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.manifests.edit import Edit, Op
from gitmedic.reconciler.manifests.paths import parse_path

SERVICE = Resource("Service", "shop", "catalog")
DEPLOY = Resource("Deployment", "shop", "checkout", "apps/v1")
FILE = "apps/shop/app.yaml"
BASE = """apiVersion: v1
kind: Service
metadata: {name: catalog, namespace: shop}
spec:
  ports: [{port: 80, targetPort: 8081}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        env: [{name: PORT, value: "8080"}]
"""


def read(file: str) -> str | None:
    return BASE if file == FILE else None


def edit(op: Op, path: str, value: object = None, resource: Resource = SERVICE) -> Edit:
    return Edit(op, FILE, resource, parse_path(path), value)


def test_each_edit_is_a_row_with_the_value_main_holds_before() -> None:
    rows = field_changes(
        [
            edit(Op.SET, "spec.ports[0].targetPort", 8080),
            edit(Op.INSERT, "spec.ports[0].name", "http"),
            edit(Op.REMOVE, "spec.template.spec.containers[0].env[name=PORT]", None, DEPLOY),
            Edit(Op.REMOVE_OBJECT, FILE, DEPLOY),
        ],
        read,
    )
    assert rows == (
        FieldChange(FILE, "Service shop/catalog: spec.ports[0].targetPort", "8081", "8080"),
        FieldChange(FILE, "Service shop/catalog: spec.ports[0].name", "(absent)", "http"),
        FieldChange(
            FILE,
            "Deployment shop/checkout: spec.template.spec.containers[0].env[name=PORT]",
            '{"name": "PORT", "value": "8080"}',
            "(removed)",
        ),
        FieldChange(FILE, "Deployment shop/checkout", "(whole object)", "(removed)"),
    )


def test_a_before_that_cannot_be_read_says_why_instead_of_absent() -> None:
    gone = Edit(Op.SET, "apps/other.yaml", SERVICE, parse_path("spec.type"), "ClusterIP")
    (row,) = field_changes([gone], read)
    assert row.before == "(no file apps/other.yaml on the base)"
    elsewhere = edit(Op.SET, "spec.type", "x", Resource("Service", "shop", "nope"))
    (row,) = field_changes([elsewhere], read)
    assert row.before.startswith("(could not be read: ")

    def broken(file: str) -> str:
        raise ValueError("apps/shop/app.yaml is a symbolic link")

    (row,) = field_changes([edit(Op.SET, "spec.type", "x")], broken)
    assert row.before == "(could not be read: apps/shop/app.yaml is a symbolic link)"


def test_the_table_has_file_field_before_and_after_columns() -> None:
    table = changes_table([FieldChange(FILE, "Service shop/catalog: spec.type", "A", "B")])
    assert table.splitlines() == [
        "| File | Field | Before | After |",
        "|---|---|---|---|",
        f"| {FILE} | Service shop/catalog: spec.type | A | B |",
    ]
    assert changes_table([]) == "_This PR changes no manifest field._"


def test_hostile_values_cannot_break_the_table_render_html_or_mention() -> None:
    value = "a | b\n<img src=x onerror=alert(1)> @octo-org/team ![p](http://t/x) <!-- gitmedic"
    (row,) = field_changes([edit(Op.SET, "spec.type", value)], read)
    line = changes_table([row]).splitlines()[2]
    assert line.count(" | ") == 3  # four cells: the value's own pipe is escaped
    assert "a \\| b" in line
    assert "<img" not in line and "&lt;img" in line
    assert "<!--" not in line
    assert "@octo-org" not in line and "@\u2060octo-org" in line
    assert "![" not in line


def test_values_are_redacted_and_shortened() -> None:
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    (row,) = field_changes([edit(Op.SET, "spec.type", f"Bearer {token}")], read)
    assert token not in row.after
    (row,) = field_changes([edit(Op.SET, "spec.type", "x" * 500)], read)
    assert len(row.after) == 120 and row.after.endswith("…")
