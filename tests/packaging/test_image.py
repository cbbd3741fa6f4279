"""The container image, built and run: tools/image/build.sh, then tools/image/run.sh.

The build needs no registry: buildah builds the repo's Dockerfile on a Debian
bookworm base that debootstrap makes from Debian's packages. Running it is what
``docker run --read-only --tmpfs /tmp -v STATE:/var/lib/gitmedic`` does: the
image's filesystem mounted read-only, the state directory and /tmp the only
writable places, the image's user and environment (see run.sh).

Inside the built image a Helm app and a kustomization render (the image's own helm
and kustomize, no kubectl), every git command gitmedic runs works without perl, the
live-cluster client imports and strict schema validation works after the build's
trim, the default image fits 400 MB without the model client, the -llm variant has
it, and the release dry run packs both as OCI archives.

A cold build (debootstrap, helm compiled, pip resolving the extras) takes minutes,
so this runs when the base is already cached or GITMEDIC_IMAGE_TEST=1 asks for it;
it says why when it skips (buildah or debootstrap absent, as on CI, or not root).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.conftest import faulty_boutique
from tests.manifests.helpers import commit_all, init_repo
from tests.repos.test_helm_apps import chart_repo
from tests.support.github_standin import free_port
from tests.support.tools import ROOT, pinned_versions, tool_path

pytestmark = [pytest.mark.integration, pytest.mark.image]

BUILD = ROOT / "tools/image/build.sh"
RUN = ROOT / "tools/image/run.sh"
TAG = "localhost/gitmedic:dev"  # README's build names it; the default is the version
LLM_TAG = f"{TAG}-llm"
UID = 10001
SIZE_BUDGET = 400 * 1000 * 1000  # issue 28: the default image <= 400 MB, uncompressed
# 386.5 MB measured (bench/RESULTS.md, "h31-image"; 540 before): SIZE_NOW keeps it from
# growing back towards the budget unnoticed, with a small margin for version bumps.
SIZE_NOW = 395 * 1000 * 1000


def readme_commands() -> list[list[str]]:
    """The daemonless block of README's "Container image" section, which this file runs."""
    section = (ROOT / "README.md").read_text().split("\n### Container image\n", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.S)
    return [shlex.split(line) for line in blocks[1].splitlines() if line.strip()]


def test_readme_gives_the_commands_this_file_runs() -> None:
    build, mkdir, version, serve, curl = readme_commands()
    assert build == ["tools/image/build.sh", TAG]
    assert mkdir[:2] == ["mkdir", "state"] and f"{UID}:{UID}" in mkdir
    assert version == ["tools/image/run.sh", TAG, "state", "--exec", "gitmedic", "--version"]
    assert serve[:3] == ["tools/image/run.sh", TAG, "state"]
    assert curl == ["curl", f"http://127.0.0.1:{serve[serve.index('--port') + 1]}/healthz"]


def _why_not_here() -> str | None:
    missing = [tool for tool in ("buildah", "debootstrap", "unshare") if not shutil.which(tool)]
    if missing:
        return f"{', '.join(missing)} not installed"
    if os.geteuid() != 0:
        return "debootstrap and run.sh's read-only mounts need root"
    if os.environ.get("GITMEDIC_IMAGE_TEST") == "1":
        return None
    base = subprocess.run([BUILD, "--print-base"], capture_output=True, text=True, check=False)
    if base.returncode != 0:
        return (
            f"no cached base {base.stdout.strip()} (a cold build takes minutes): "
            "run tools/image/build.sh once or set GITMEDIC_IMAGE_TEST=1"
        )
    return None


def _build(*argv: str) -> None:
    reason = _why_not_here()
    if reason:
        pytest.skip(f"image not built: {reason}")
    # pytest-xdist gives each worker this fixture: one builds, the others then
    # find every layer cached (--layers) instead of racing it.
    lock = Path.home() / ".cache/gitmedic-image/build.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        built = subprocess.run(
            [BUILD, *argv], capture_output=True, text=True, timeout=3600, check=False
        )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]


@pytest.fixture(scope="module")
def image() -> str:
    _build(TAG)
    return TAG


@pytest.fixture(scope="module")
def llm_image(image: str) -> str:
    _build("--llm", LLM_TAG)
    return LLM_TAG


def state_dir(path: Path) -> Path:
    path.mkdir()
    os.chown(path, UID, UID)
    return path


def run(image: str, state: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUN, image, state, *argv], capture_output=True, text=True, timeout=300, check=False
    )


def test_version(image: str, tmp_path: Path) -> None:
    version = readme_commands()[2]
    result = run(image, state_dir(tmp_path / "state"), *version[3:])
    # what the git tags give, as build.sh passes it into the build (the context has no .git)
    expected = subprocess.run(
        [BUILD, "--print-version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert (result.returncode, result.stdout) == (0, f"gitmedic {expected}\n"), result.stderr


def test_runs_as_10001_with_only_the_volume_and_tmp_writable(image: str, tmp_path: Path) -> None:
    probe = (
        "id -u; id -g; touch /var/lib/gitmedic/w /tmp/w && echo writable; "
        "for p in /opt/gitmedic/w /w /etc/w; do touch $p 2>&1 || true; done"
    )
    state = state_dir(tmp_path / "state")
    result = run(image, state, "--exec", "sh", "-c", probe)
    lines = result.stdout.splitlines() + result.stderr.splitlines()
    assert lines[:3] == [str(UID), str(UID), "writable"], lines
    refused = [line for line in lines[3:] if "Read-only file system" in line]
    assert len(refused) == 3, lines
    assert (state / "w").stat().st_uid == UID


def test_final_stage_has_no_compiler_and_no_pip(image: str, tmp_path: Path) -> None:
    probe = (
        "for t in gcc cc c++ make pip pip3; do command -v $t; done; "
        "ls /opt/gitmedic/bin | grep -i pip; "
        "/usr/bin/python3 -m pip --version 2>&1; "
        "/opt/gitmedic/bin/python -m pip --version 2>&1; true"
    )
    result = run(image, state_dir(tmp_path / "state"), "--exec", "sh", "-c", probe)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "/usr/bin/python3: No module named pip",
        "/opt/gitmedic/bin/python: No module named pip",
    ]


def test_serve_answers_healthz_on_a_read_only_root(image: str, tmp_path: Path) -> None:
    state = state_dir(tmp_path / "state")
    repo = init_repo(state / "repo")
    faulty_boutique(repo / "deploy/app.yaml")
    commit_all(repo)
    subprocess.run(["chown", "-R", f"{UID}:{UID}", repo], check=True)
    port = free_port()
    before = set(state.iterdir())
    serve = readme_commands()[3][3:]
    serve[serve.index("--port") + 1] = str(port)  # 8080 may be taken on a shared machine
    with _serving(image, state, serve, tmp_path / "serve.log") as log:
        body = _get_when_up(f"http://127.0.0.1:{port}/healthz", log)
    assert json.loads(body) == {"status": "ok"}
    assert set(state.iterdir()) - before, "serve wrote nothing to the state volume"


@contextmanager
def _serving(image: str, state: Path, argv: list[str], log: Path) -> Iterator[Path]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [RUN, image, state, *argv], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield log
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=60)


def _get_when_up(url: str, log: Path) -> str:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode())
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"serve never answered {url}: {log.read_text()[-3000:]}")


def _chowned(repo: Path) -> Path:
    subprocess.run(["chown", "-R", f"{UID}:{UID}", repo], check=True)
    return repo


def test_a_helm_app_renders_inside_the_image_with_the_pinned_helm(
    image: str, tmp_path: Path
) -> None:
    state = state_dir(tmp_path / "state")
    helm = run(image, state, "--exec", "helm", "version", "--template", "{{.Version}}")
    pinned = {
        line.split()[0]: line.split()[1]
        for line in (ROOT / ".ci/tools.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert (helm.returncode, helm.stdout) == (0, pinned["helm"]), helm.stderr
    # podinfo's chart with its prod values, a memory limit far too small put in them:
    # found only if helm template rendered the chart, and traced to the values line
    repo = chart_repo(state)
    prod = repo / "charts/podinfo/values-prod.yaml"
    prod.write_text(prod.read_text().replace("    memory: 256Mi\n", "    memory: 1Mi\n", 1))
    commit_all(repo)
    _chowned(repo)
    result = run(image, state, "--exec", "gitmedic", "detect", "/var/lib/gitmedic/repo")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Deployment/prod/podinfo  (charts/podinfo/templates/deployment.yaml:2)" in result.stdout
    assert "set by resources.limits.memory at charts/podinfo/values-prod.yaml:169" in result.stdout


def test_a_kustomization_renders_inside_the_image(image: str, tmp_path: Path) -> None:
    state = state_dir(tmp_path / "state")
    # the standalone kustomize at the pinned version, and no kubectl (60 MB) beside it
    tools = run(image, state, "--exec", "sh", "-c", "kustomize version; command -v kubectl")
    assert tools.stdout.splitlines() == [pinned_versions()["kustomize"]], tools.stderr
    repo = init_repo(state / "repo")
    faulty_boutique(repo / "deploy/app.yaml")
    # a prefix only kustomize applies: the names carry it only if kubectl kustomize ran
    (repo / "deploy/kustomization.yaml").write_text("namePrefix: kz-\nresources:\n  - app.yaml\n")
    commit_all(repo)
    _chowned(repo)
    result = run(
        image, state, "--exec", "gitmedic", "detect", "/var/lib/gitmedic/repo", "--format", "json"
    )
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["errors"] == []
    names = {f["resource"]["name"] for f in report["findings"]}
    assert names and all(name.startswith("kz-") for name in names), names


# Every git subcommand whose name is a string in src/gitmedic (the names of bookworm's
# git 2.39 `git --list-cmds=main`), but "shell", which is cli.py's completion shell:
# git-shell is a server's login shell, left out of the image with git's other
# server-side programs.
GIT_USED = [
    "add",
    "apply",
    "archive",
    "bisect",
    "branch",
    "cat-file",
    "check-ref-format",
    "checkout",
    "clean",
    "clone",
    "commit",
    "commit-tree",
    "config",
    "credential",
    "diff",
    "fetch",
    "for-each-ref",
    "hash-object",
    "help",
    "init",
    "log",
    "ls-files",
    "ls-tree",
    "merge",
    "merge-base",
    "merge-tree",
    "prune",
    "pull",
    "push",
    "read-tree",
    "rebase",
    "remote",
    "replace",
    "reset",
    "rev-list",
    "rev-parse",
    "revert",
    "show",
    "stage",
    "status",
    "symbolic-ref",
    "tag",
    "update-index",
    "update-ref",
    "var",
    "version",
    "worktree",
    "write-tree",
]
# What gitmedic does with them, on a real clone of a bare "forge" repository.
GIT_WORKFLOW = """set -eu
cd /tmp
git config --global user.email bot@example.com
git config --global user.name bot
git config --global init.defaultBranch main
git init -q --bare origin.git
git clone -q file:///tmp/origin.git work 2>/dev/null
cd work
echo one >f && git add f && git commit -qm one && git push -q origin HEAD:main
git checkout -q -b fix && echo two >f && git commit -qam two && git push -q origin fix
git checkout -q main && git merge -q --no-ff -m merged fix
git revert --no-edit fix >/dev/null
git rebase -q main fix && git checkout -q main
git fetch -q origin && git pull -q --no-rebase origin main
git tag -a v1 -m v1 && git push -q origin main --tags
git worktree add -q ../tree fix && git -C ../tree log --oneline -1 >/dev/null
git worktree remove ../tree && git worktree prune
git merge-tree --write-tree main fix >/dev/null
git merge-base main fix >/dev/null
echo HEAD | git cat-file --batch-check >/dev/null && git cat-file -p HEAD >/dev/null
git log --oneline >/dev/null && git rev-list --count HEAD >/dev/null
git rev-parse HEAD >/dev/null && git symbolic-ref HEAD >/dev/null
git ls-tree HEAD >/dev/null && git ls-files >/dev/null && git show --stat HEAD >/dev/null
git for-each-ref >/dev/null && git remote -v >/dev/null && git update-ref refs/x/y HEAD
git diff HEAD~1 HEAD >/tmp/p && git apply -R --check /tmp/p
git hash-object f >/dev/null && git update-index --refresh >/dev/null
git read-tree HEAD && git commit-tree "$(git write-tree)" -p HEAD -m x >/dev/null
git archive HEAD | tar -t >/dev/null
git reset -q --hard && git clean -fdq && git prune && git status --porcelain
git clone -q --depth 1 file:///tmp/origin.git /tmp/shallow
echo ALL-OK
"""


def test_every_git_command_gitmedic_runs_works_without_perl(image: str, tmp_path: Path) -> None:
    state = state_dir(tmp_path / "state")
    # perl's packages are gone (perl-base, which dpkg itself needs, stays)
    probe = run(
        image,
        state,
        "--exec",
        "sh",
        "-c",
        "dpkg-query -W -f '${db:Status-Abbrev} ${Package}\\n' | awk '$1 == \"ii\" {print $2}'",
    )
    installed = set(probe.stdout.split())
    assert "git" in installed and "perl-base" in installed, probe.stderr
    assert not {p for p in installed if re.fullmatch(r"perl|perl-modules-.*|libperl5.*", p)}
    # each starts (a perl script without its modules fails before its usage line)
    usage = run(
        image,
        state,
        "--exec",
        "sh",
        "-c",
        'for c in "$@"; do git "$c" -h >/tmp/out 2>&1; '
        'echo "$c $? $(grep -c "usage: git" /tmp/out)"; done',
        "sh",
        *GIT_USED,
    )
    started = [line.split() for line in usage.stdout.splitlines()]
    assert [c for c, code, lines in started if code not in ("0", "129") or lines == "0"] == []
    assert [c for c, *_ in started] == GIT_USED, usage.stderr
    workflow = run(image, state, "--exec", "sh", "-c", GIT_WORKFLOW)
    assert (workflow.returncode, workflow.stdout) == (0, "ALL-OK\n"), workflow.stderr


BOGUS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          bogusField: 3
"""


def test_a_learned_rule_evaluates_with_the_stripped_cel_engine(image: str, tmp_path: Path) -> None:
    probe = (
        "from gitmedic.bot.memory.cel import Program\n"
        "rule = Program('obj.spec.replicas * 2 + size(obj.metadata.name)', ['obj'])\n"
        "print(rule.evaluate({'obj': {'spec': {'replicas': 3}, 'metadata': {'name': 'web'}}}))"
    )
    result = run(image, state_dir(tmp_path / "state"), "--exec", "python", "-c", probe)
    assert (result.returncode, result.stdout) == (0, "9\n"), result.stderr


def test_the_cluster_client_and_every_strict_schema_survive_the_builds_trim(
    image: str, tmp_path: Path
) -> None:
    state = state_dir(tmp_path / "state")
    imports = run(
        image,
        state,
        "--exec",
        "python",
        "-c",
        "import kubernetes.client, kubernetes.config, kubernetes.watch, kubernetes.dynamic,"
        " kubernetes.stream, kubernetes.leaderelection\n"
        "from gitmedic.reconciler.manifests.schema_files import schema_root\n"
        "import os\n"
        "print(*sorted(os.listdir(schema_root())))",
    )
    assert imports.returncode == 0, imports.stderr
    folders = imports.stdout.split()
    assert folders and all(f.endswith("-local-strict") for f in folders), folders
    folders.sort(key=lambda f: tuple(int(n) for n in f[1:].split("-")[0].split(".")))
    (state / "bad").mkdir()
    (state / "bad/deploy.yaml").write_text(BOGUS)
    _chowned(state / "bad")
    for folder in (folders[0], folders[-1]):  # the oldest and the newest Kubernetes
        version = ".".join(folder[1:].split(".")[:2])
        result = run(
            image,
            state,
            "--exec",
            "gitmedic",
            "detect",
            "/var/lib/gitmedic/bad",
            "--kubernetes-version",
            version,
            "--format",
            "json",
        )
        assert result.returncode == 1, result.stderr
        (finding,) = json.loads(result.stdout)["findings"]
        assert finding["detector"] == "schema-invalid" and "bogusField" in finding["summary"]
        assert f"Kubernetes {version}" in finding["summary"]


def _python_can_import(image: str, state: Path, module: str) -> bool:
    probe = run(image, state, "--exec", "python", "-c", f"import {module}")
    assert probe.returncode == 0 or "ModuleNotFoundError" in probe.stderr, probe.stderr
    return probe.returncode == 0


def _content_bytes(image: str) -> int:
    """The image's files, uncompressed, each hard link once (what its layers unpack to),
    read on its mounted root filesystem (as root: some folders are root's only)."""

    def buildah(*argv: str) -> str:
        done = subprocess.run(["buildah", *argv], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    ctr = buildah("from", "--pull=never", "--quiet", image)
    try:
        seen: set[tuple[int, int]] = set()
        total = 0
        for folder, _dirs, files in os.walk(buildah("mount", ctr)):
            for name in files:
                info = os.lstat(os.path.join(folder, name))
                if (info.st_dev, info.st_ino) not in seen:
                    seen.add((info.st_dev, info.st_ino))
                    total += info.st_size
        return total
    finally:
        buildah("rm", ctr)


def test_the_default_image_has_no_model_client_and_does_not_grow(
    image: str, tmp_path: Path
) -> None:
    state = state_dir(tmp_path / "state")
    assert not _python_can_import(image, state, "litellm")
    assert _python_can_import(image, state, "cel_expr_python")  # [rules] is in
    size = _content_bytes(image)
    print(f"{image}: {size / 1e6:.0f} MB")
    assert size <= SIZE_NOW, f"{image} is {size / 1e6:.0f} MB"


def test_the_default_image_fits_400_mb(image: str) -> None:
    size = _content_bytes(image)
    assert size <= SIZE_BUDGET, f"{image} is {size / 1e6:.0f} MB"


def test_the_llm_variant_has_the_model_client(llm_image: str, tmp_path: Path) -> None:
    state = state_dir(tmp_path / "state")
    assert _python_can_import(llm_image, state, "litellm")
    print(f"{llm_image}: {_content_bytes(llm_image) / 1e6:.0f} MB")


def _oci_labels(archive: Path) -> dict[str, str]:
    with tarfile.open(archive) as tar:

        def blob(digest: str) -> dict[str, object]:
            member = tar.extractfile("blobs/sha256/" + digest.split(":", 1)[1])
            assert member
            return dict(json.load(member))

        index = tar.extractfile("index.json")
        assert index
        (manifest,) = json.load(index)["manifests"]
        config = blob(str(blob(manifest["digest"])["config"]["digest"]))  # type: ignore[index]
        return dict(config["config"]["Labels"])  # type: ignore[index]


def test_the_release_dry_run_packs_both_images(image: str, llm_image: str, tmp_path: Path) -> None:
    out = tmp_path / "release"
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "PATH": f"{Path(tool_path('helm')).parent}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        [ROOT / "tools/release/dry-run.sh", out],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    version = subprocess.run(
        [sys.executable, "-m", "setuptools_scm"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archives = sorted(out.glob("gitmedic-image-*.oci.tar"))
    assert sorted(a.name.endswith("-llm.oci.tar") for a in archives) == [False, True], archives
    sums = {
        name: digest
        for digest, name in (
            line.split("  ", 1) for line in (out / "SHA256SUMS").read_text().splitlines()
        )
    }
    for archive in archives:
        print(f"{archive.name}: {archive.stat().st_size / 1e6:.0f} MB")
        assert sums[archive.name] == hashlib.sha256(archive.read_bytes()).hexdigest()
        labels = _oci_labels(archive)
        assert labels["org.opencontainers.image.version"] == version
        assert (
            labels["org.opencontainers.image.revision"]
            == subprocess.run(
                ["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
