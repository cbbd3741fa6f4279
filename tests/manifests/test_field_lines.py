"""The line of a field of a plain YAML object, composed again only when a finding asks."""

from __future__ import annotations

from gitmedic.reconciler.manifests.field_lines import FileFields, ObjectFields
from gitmedic.reconciler.manifests.parse import parse_text

STREAM = """\
# a leading comment
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
    app: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data:
    mode: fast
"""


def fields_of(name: str) -> ObjectFields:
    parsed = parse_text(STREAM, "app.yaml")
    (obj,) = [p for p in parsed.objects if p.body["metadata"]["name"] == name]
    return FileFields(STREAM).at(obj.line)


def test_a_field_is_found_by_its_path_in_either_index_spelling() -> None:
    web = fields_of("web")
    assert web.line_of("spec.ports[0].targetPort") == 15
    assert web.line_of("spec.ports.0.targetPort") == 15
    assert web.line_of("spec.selector") == 10


def test_a_key_holding_dots_is_one_key() -> None:
    web = fields_of("web")
    assert web.line_of("metadata.labels.app.kubernetes.io/name") == 7
    assert web.line_of("metadata.labels.app") == 8


def test_a_missing_field_is_located_at_the_deepest_part_that_exists() -> None:
    web = fields_of("web")
    assert web.line_of("spec.ports[0].appProtocol") == 13
    assert web.line_of("spec.ports[3]") == 12
    assert web.line_of("status.loadBalancer") is None


def test_an_item_of_a_list_in_a_later_document_is_found() -> None:
    settings = fields_of("settings")
    assert settings.line_of("data.mode") == 25


def test_an_unreadable_document_has_no_field_lines() -> None:
    broken = FileFields("apiVersion: v1\nkind: [unclosed\n")
    assert broken.at(1).line_of("kind") is None
