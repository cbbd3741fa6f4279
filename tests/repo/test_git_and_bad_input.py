"""The git wrapper (branch, commit as the bot, merge --no-ff, revert incl. merges, logs,
diff stats) and bad input: typed errors with clear messages, the repo left clean."""

from __future__ import annotations

import pytest

from gitmedic.detectors.finding import Resource
from gitmedic.reconciler.git import (
    BOT,
    Git,
    GitError,
    MergeConflict,
    NothingToCommit,
    UnknownRevision,
)
from gitmedic.reconciler.manifests.documents import EditError, ObjectNotFound
from gitmedic.reconciler.manifests.edit import Edit, Op, PathNotFound, StaleEdit
from gitmedic.reconciler.manifests.history import last_change, restore_fields
from gitmedic.reconciler.manifests.paths import parse_path
from gitmedic.reconciler.manifests.repo import ManifestRepo
from tests.repo.conftest import MakeRepo

BOUTIQUE = "online-boutique/release/kubernetes-manifests.yaml"
FILE = f"apps/{BOUTIQUE}"
CART = Resource("Service", "boutique", "cartservice")
PORT = parse_path("spec.ports[name=grpc].targetPort")


def _set(value: object, base: str | None = None) -> Edit:
    return Edit(Op.SET, FILE, CART, PORT, value, base=base)


def _branch_with_port(git: Git, repo: ManifestRepo, branch: str, port: int) -> str:
    git.checkout("main")
    git.branch_create(branch)
    git.checkout(branch)
    repo.apply([_set(port)])
    return git.commit(f"cartservice targetPort {port}", FILE)


def test_commit_is_made_by_the_bot(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    commit = git.log(max_count=1)[0]
    assert (commit.author, commit.email) == (BOT.name, BOT.email)
    with pytest.raises(NothingToCommit):
        git.commit("nothing", FILE)


def test_merge_no_ff_then_revert_the_merge(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    base = git.head()
    fix = _branch_with_port(git, repo, "gitmedic/1/port", 9999)
    git.checkout("main")
    merge = git.merge("gitmedic/1/port", "Merge fix")
    assert git.log(max_count=1)[0].parents == (base, fix)
    assert git.is_ancestor(fix, "main") and not git.is_ancestor(fix, base)
    assert [(s.path, s.added, s.deleted) for s in git.diff_stats(base, merge)] == [(FILE, 1, 1)]
    git.revert(merge)
    assert repo.read(FILE) == git.show_file(base, FILE).decode()
    assert last_change(repo, FILE, CART, PORT) is not None
    assert last_change(repo, FILE, CART, PORT).subject.startswith("Revert")  # type: ignore[union-attr]
    git.branch_delete("gitmedic/1/port")
    assert git.branches() == ["main"]


def test_last_change_names_the_commit_that_changed_the_field(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    repo.apply([_set(9999)])
    fault = git.commit("break cartservice", FILE)
    repo.apply([Edit(Op.SET, FILE, CART, parse_path("metadata.labels.app"), "cart")])
    git.commit("unrelated label", FILE)
    found = last_change(repo, FILE, CART, PORT)
    assert found is not None and found.sha == fault


def test_conflicting_merge_and_revert_are_aborted_and_leave_the_repo_clean(
    make_repo: MakeRepo,
) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    _branch_with_port(git, repo, "a", 1111)
    _branch_with_port(git, repo, "b", 2222)
    git.checkout("main")
    first = git.merge("a", "Merge a")
    with pytest.raises(MergeConflict, match=r"merge conflicts in apps/online-boutique"):
        git.merge("b", "Merge b")
    assert git.is_clean() and git.head() == first
    repo.apply([_set(3333)])
    git.commit("later change to the same line", FILE)
    head = git.head()
    with pytest.raises(MergeConflict) as err:
        git.revert(first)
    assert err.value.files == [FILE] and "revert" in str(err.value)
    assert git.is_clean() and git.head() == head and git.branches() == ["a", "b", "main"]


def test_unknown_revisions_are_typed(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    with pytest.raises(UnknownRevision, match="no-such-rev"):
        git.rev_parse("no-such-rev")
    with pytest.raises(UnknownRevision):
        git.show_file("HEAD", "apps/missing.yaml")
    with pytest.raises(UnknownRevision):
        git.checkout("no-such-branch")
    with pytest.raises(GitError) as err:
        git.run("frobnicate")
    assert err.value.command == ["git", "frobnicate"] and err.value.stderr


def test_bad_edits_raise_typed_errors_and_change_nothing(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    before = repo.read(FILE)
    missing = Edit(Op.SET, FILE, CART, parse_path("spec.ports[name=http].targetPort"), 1)
    with pytest.raises(PathNotFound, match=r"has no spec.ports\[name=http\].*items named grpc"):
        repo.apply([_set(1), missing])  # the first edit is not written either
    with pytest.raises(ObjectNotFound, match="no Service boutique/nope"):
        repo.apply([Edit(Op.SET, FILE, Resource("Service", "boutique", "nope"), PORT, 1)])
    with pytest.raises(PathNotFound, match="use insert"):
        repo.apply([Edit(Op.SET, FILE, CART, parse_path("spec.clusterIP"), "None")])
    with pytest.raises(EditError, match="not a file path inside the repository"):
        repo.apply([Edit(Op.SET, "../etc/passwd", CART, PORT, 1)])
    with pytest.raises(EditError, match="invalid edit"):
        Edit.from_json({"op": "explode", "file": FILE, "resource": CART.to_json()})
    assert repo.read(FILE) == before and git.is_clean()
    assert not list(git.root.rglob("*.tmp"))


def test_a_stale_edit_is_refused(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    edit = _set(9999, base=repo.blob(FILE))
    repo.apply([Edit(Op.SET, FILE, CART, parse_path("spec.ports[0].port"), 7071)])
    changed = repo.read(FILE)
    with pytest.raises(StaleEdit, match="changed since the edit was computed"):
        repo.apply([edit])
    assert repo.read(FILE) == changed


def test_edits_round_trip_through_json_and_restore_exactly(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo(git.root)
    original = repo.read(FILE)
    [applied] = repo.apply([Edit(Op.REMOVE_OBJECT, FILE, CART)])
    inverse = Edit.from_json(applied.inverse.to_json())
    assert inverse == applied.inverse and inverse.verbatim == applied.inverse.verbatim
    repo.apply([inverse])
    assert repo.read(FILE) == original
    assert restore_fields(ManifestRepo(git.root, namespace="boutique"), CART, [PORT], "HEAD") == []


def test_crlf_files_keep_their_line_endings(make_repo: MakeRepo) -> None:
    git = make_repo()
    (git.root / "svc.yaml").write_bytes(
        b"---\r\napiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: a\r\n"
        b"spec:\r\n  ports:\r\n  - port: 80  # web\r\n    targetPort: 'http'\r\n---\r\n"
    )
    repo = ManifestRepo(git.root)
    path = parse_path("spec.ports[0].targetPort")
    repo.apply([Edit(Op.SET, "svc.yaml", Resource("Service", "x", "a"), path, "web")])
    assert (
        (git.root / "svc.yaml")
        .read_bytes()
        .endswith(b"  - port: 80  # web\r\n    targetPort: 'web'\r\n---\r\n")
    )


def test_objects_are_listed_with_file_document_and_line(make_repo: MakeRepo) -> None:
    git = make_repo(BOUTIQUE)
    repo = ManifestRepo.open(git.root / "apps", namespace="boutique")
    cart = [o for o in repo.objects() if o.resource == CART]
    assert [(o.file, o.line) for o in cart] == [(FILE, 352)]
    assert repo.desired("HEAD").snapshot.get("Service", "boutique", "cartservice") is not None
