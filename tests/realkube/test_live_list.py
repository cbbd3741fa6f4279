"""The live loader's list path against the real API server: paging with the server's
own continue tokens, and what a compaction of etcd in the middle of a list does.

The real server (v1.37) serves the later pages of a cached kind's list from its
watch cache, at the list's revision, even after etcd compacted it: the snapshot
stays one revision, no 410. A kind without a watch cache (the tier runs
LimitRanges so, ``UNCACHED_PLURAL``) is paged from etcd, where the compacted
continue token is 410 Gone: the loader lists that kind again from its first page.
(The watches of gitmedic's watch cache, and their 410, are test_watch_cache's.)
"""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any

import pytest

from gitmedic.reconciler import live
from tests.realkube.conftest import REALKUBE
from tests.realkube.control_plane import UNCACHED_PLURAL
from tests.realkube.tier import Tier

pytestmark = REALKUBE
MAPS = 7


def config_maps(tier: Tier, namespace: str) -> None:
    tier.plane.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "namespace": namespace},
                "data": {"i": str(i)},
            }
            for i in range(MAPS)
        ]
    )


def etcd_compact(etcd: str) -> int:
    """Compact etcd up to its current revision (its v3 JSON gateway); the revision."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(f"{etcd}{path}", data=json.dumps(body).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer

    key = base64.b64encode(b"/registry/configmaps").decode()
    revision = int(post("/v3/kv/range", {"key": key})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision


def names(snapshot: Any) -> list[str]:
    return sorted(o.name for o in snapshot.of_kind("ConfigMap") if o.name.startswith("cm-"))


def test_a_namespace_is_read_page_by_page_with_the_servers_continue_tokens(
    tier: Tier, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_maps(tier, namespace)
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    pages: list[list[tuple[str, object]]] = []
    real_get = live._get

    def recording(api: Any, call: live.ListCall, path: str, query: Any) -> Any:
        if call.kind == "ConfigMap":
            pages.append(list(query))
        return real_get(api, call, path, query)

    monkeypatch.setattr(live, "_get", recording)
    api = live.connect(kubeconfig=str(tier.plane.kubeconfig))

    snapshot, denied = live.read_live(api, namespace=namespace)

    assert denied == ()
    assert names(snapshot) == [f"cm-{i}" for i in range(MAPS)]
    assert len(pages) >= 4 and all(("limit", 2) in q for q in pages)
    assert [q for q in pages[1:] if not any(k == "continue" for k, _ in q)] == []


def test_pages_of_one_list_come_from_one_revision_even_across_a_compaction(
    tier: Tier, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the real server does with a fresh token when etcd compacts mid-list: the
    later pages still come from the list's revision (its watch cache), no 410."""
    config_maps(tier, namespace)
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    answers: list[int] = []
    real_get = live._get

    def compacting(api: Any, call: live.ListCall, path: str, query: Any) -> Any:
        answer = real_get(api, call, path, query)
        if call.kind == "ConfigMap":
            answers.append(answer[0])
            if len(answers) == 1:
                tier.plane.apply(
                    [
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": "cm-late", "namespace": namespace},
                        }
                    ]
                )
                etcd_compact(tier.plane.etcd)
        return answer

    monkeypatch.setattr(live, "_get", compacting)
    api = live.connect(kubeconfig=str(tier.plane.kubeconfig))

    snapshot, _ = live.read_live(api, namespace=namespace)

    assert set(answers) == {200} and len(answers) == 4
    assert names(snapshot) == [f"cm-{i}" for i in range(MAPS)], "not cm-late: one revision"


def limit_range(name: str, namespace: str) -> dict[str, object]:
    limits = [{"type": "Container", "default": {"cpu": "100m"}}]
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"limits": limits},
    }


def test_an_uncached_kinds_continue_token_compacted_away_is_410_and_listed_again(
    tier: Tier, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert UNCACHED_PLURAL == "limitranges"
    tier.plane.apply([limit_range(f"lr-{i}", namespace) for i in range(MAPS)])
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    answers: list[tuple[int, bool]] = []  # (status, was it a continuation)
    real_get = live._get

    def compacting(api: Any, call: live.ListCall, path: str, query: Any) -> Any:
        answer = real_get(api, call, path, query)
        if call.kind == "LimitRange":
            answers.append((answer[0], any(k == "continue" for k, _ in query)))
            if len(answers) == 1:
                tier.plane.apply([limit_range("lr-late", namespace)])
                etcd_compact(tier.plane.etcd)
        return answer

    monkeypatch.setattr(live, "_get", compacting)
    api = live.connect(kubeconfig=str(tier.plane.kubeconfig))

    snapshot, _ = live.read_live(api, namespace=namespace)

    assert answers[:3] == [(200, False), (410, True), (200, False)], answers
    assert {status for status, _ in answers[2:]} == {200}
    listed = sorted(o.name for o in snapshot.of_kind("LimitRange"))
    assert listed == sorted([*(f"lr-{i}" for i in range(MAPS)), "lr-late"]), "the fresh list"
