"""A commit that changes no semantics (key order, indentation, quoting, a file split or
rename) is never blamed: not for a fault older than it, not for a live symptom after it.

hotel-reservation (a folder of files): geo's Deployment and Service are restyled in
one commit, then moved to one file per object under new names in another.
"""

from __future__ import annotations

import time

from gitmedic.bot.responder.responder import Responder
from gitmedic.detectors import Resource
from gitmedic.reconciler.manifests.paths import parse_path
from tests.responder.conftest import MakeApp, no_llm
from tests.responder.noop import restyle, split_and_rename
from tests.responder.support import (
    AppRepo,
    Fault,
    Touch,
    crashloop,
    image_pull,
    incident_of,
    set_,
)
from tests.responder.test_no_history import born_with

H = "hotel-reservation"
GEO = "spec.template.spec.containers[name=hotel-reserv-geo]."


def _noop_commits(app: AppRepo) -> list[str]:
    geo = app.git.root / app.repo.path / "geo"
    files = [geo / "geo-deployment.yaml", geo / "geo-service.yaml"]
    before = app.findings()
    shas = [restyle(app.git, files), split_and_rename(app.git, files, geo / "objects")]
    assert app.findings() == before, "the same objects: the same findings"
    return shas


def test_a_fault_older_than_a_noop_commit_is_not_blamed_on_it(make_app: MakeApp) -> None:
    app = make_app(H)
    born_with(app, Touch("Service", "geo", (set_("spec.ports[0].targetPort", 9999),)))
    noops = _noop_commits(app)
    found = [f for f in app.findings() if f.detector == "service-target-port"]
    incident = incident_of(app.repo.path, found, time.time(), None)

    proposal = Responder(app.repo, completion=no_llm).propose(incident)

    assert proposal.commit is None or proposal.commit.sha not in noops, proposal.diagnosis
    app.repo.apply(proposal.edits)
    ref = Resource("Service", app.repo.namespace, "geo")
    path = parse_path("spec.ports[0].targetPort")
    assert app.repo.value_at(app.repo.locate(ref), ref, path)[1] == 8083


def test_a_live_crash_after_noop_commits_blames_none_of_them(make_app: MakeApp) -> None:
    app = make_app(H)
    noops = _noop_commits(app)
    crash = Fault("crash", H, (), live=crashloop("geo", "hotel-reserv-geo"))
    found = [f for f in app.findings(crash) if f.detector == "pod-crashloop"]
    assert found
    incident = incident_of(app.repo.path, found, time.time(), app.live(crash))

    proposal = Responder(app.repo, completion=no_llm).propose(incident)

    assert proposal.edits == () and proposal.commit is None, proposal.diagnosis
    assert not {c for c in noops if c[:12] in proposal.diagnosis}


def test_a_field_changed_before_a_move_is_restored_from_where_the_object_was(
    make_app: MakeApp,
) -> None:
    """The image was broken, then the file was split and renamed: the move is passed
    over, the image commit is blamed, and its old value is read from the old file."""
    app = make_app(H)
    ref = Resource("Deployment", app.repo.namespace, "geo")
    image = parse_path(f"{GEO}image")
    good = app.repo.value_at(app.repo.locate(ref), ref, image)[1]
    bad = app.commit(
        "geo: new image", Touch("Deployment", "geo", (set_(f"{GEO}image", "geo:nope"),))
    )
    noops = _noop_commits(app)
    pull = Fault("pull", H, (), live=image_pull("geo", "hotel-reserv-geo"))
    found = [f for f in app.findings(pull) if f.detector == "pod-image-pull"]
    incident = incident_of(app.repo.path, found, time.time(), app.live(pull))

    proposal = Responder(app.repo, completion=no_llm).propose(incident)

    assert proposal.commit is not None and proposal.commit.sha == bad, proposal.diagnosis
    assert (proposal.strategy, proposal.playbook) == ("playbook", "bad-image")
    assert not {c for c in noops if c[:12] in proposal.diagnosis}
    app.repo.apply(proposal.edits)
    assert app.repo.value_at(app.repo.locate(ref), ref, image)[1] == good
