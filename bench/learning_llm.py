"""The learning curve's class no playbook covers: a latent entrypoint, fixed by a scripted model.

A Deployment's new entrypoint (``command``) was committed weeks before the
incident (a paused sync, say) and rolls out only now, with a harmless annotation
on another Deployment: the old image cannot run it and crash-loops. No playbook
restores ``command``, bisect has no desired-state finding to prove, and the live
blame looks only at recent commits, where nothing changed the crashing
container; so the responder asks the model. The model is scripted (no network):
it proposes restoring ``command`` to what the healthy revision had, then submits
its diagnosis. Its usage is counted from what it is really sent and answers
(4 characters a token, the usual estimate for English and JSON), so the tokens
follow the prompts the loop builds, tool results included.

An LLM-authored change to ``command`` is outside the policy's allowlist, so it
waits for a person; the benchmark's person approves at once (the label
``/gitmedic approve`` sets), and the loop carries on.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

# app -> (the first object, the second object, a Deployment a harmless commit annotates)
LATENT = {
    "online-boutique": ("productcatalogservice", "currencyservice", "adservice"),
    "sock-shop": ("carts", "orders", "catalogue"),
    "hotel-reservation": ("profile", "rate", "geo"),
}
LATENT_AT = "2025-12-01T00:00:00Z"  # a month before the sim's clock starts
CHARS_PER_TOKEN = 4


class ScriptedModel:
    """An OpenAI-shaped completion: one turn proposing ``edit``, then the diagnosis."""

    def __init__(self, edit: dict[str, Any], diagnosis: str) -> None:
        self.turns = [[("propose_edit", edit)], [("submit_diagnosis", {"summary": diagnosis})]]
        self.calls = 0

    def __call__(self, **kwargs: Any) -> Any:
        turn = self.turns[min(self.calls, len(self.turns) - 1)]
        self.calls += 1
        sent = json.dumps(kwargs.get("messages", [])) + json.dumps(kwargs.get("tools", []))
        answer = json.dumps(turn)
        calls = [
            SimpleNamespace(
                id=f"call-{i}", function=SimpleNamespace(name=n, arguments=json.dumps(a))
            )
            for i, (n, a) in enumerate(turn)
        ]
        usage = SimpleNamespace(
            prompt_tokens=math.ceil(len(sent) / CHARS_PER_TOKEN),
            completion_tokens=math.ceil(len(answer) / CHARS_PER_TOKEN),
        )
        message = SimpleNamespace(content=None, tool_calls=calls)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=usage)


def inject_latent(repo: Path, path: str, ns: str, target: str, benign: str, n: int) -> Any:
    """The old entrypoint commit and today's harmless one; the model that restores it."""
    from gitmedic.reconciler import gitcmd
    from gitmedic.reconciler.manifests.load import load_desired
    from gitmedic.sim.faults import edit as ed
    from gitmedic.sim.faults.git import AUTHOR, commit_all
    from gitmedic.sim.faults.targets import workload

    wl = workload(load_desired(repo / path, namespace=ns).snapshot, target)
    first = dict(ed.containers(wl.obj.body)[0])

    def entrypoint(doc: Any) -> None:
        ed.containers(doc)[0]["command"] = [f"/{target}", "serve", "--grpc"]

    ed.edit(repo, wl.obj, entrypoint)
    dated = {**AUTHOR, "GIT_AUTHOR_DATE": LATENT_AT, "GIT_COMMITTER_DATE": LATENT_AT}
    gitcmd.output(repo, "add", "-A")
    gitcmd.output(repo, "commit", "-qm", f"{target}: the gRPC entrypoint", env=dated)

    other = workload(load_desired(repo / path, namespace=ns).snapshot, benign)

    def annotate(doc: Any) -> None:
        doc.setdefault("metadata", {}).setdefault("annotations", {})["team"] = f"team-{n}"

    ed.edit(repo, other.obj, annotate)
    commit_all(repo, f"{benign}: team annotation")
    return ScriptedModel(_restore(wl.obj, first), f"{target} runs an entrypoint its image lacks")


def _restore(obj: Any, healthy: dict[str, Any]) -> dict[str, Any]:
    field = f"spec.template.spec.containers[name={healthy['name']}].command"
    edit = {"file": obj.source.file, "kind": obj.kind, "name": obj.name, "path": field}
    if "command" in healthy:
        return {**edit, "op": "set", "value": healthy["command"]}
    return {**edit, "op": "remove"}
