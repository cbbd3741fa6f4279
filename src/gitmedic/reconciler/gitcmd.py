"""The one place gitmedic starts git, so that nothing from the repository ever runs.

A manifest repository is shaped by anyone with write access (or a model they
prompted), and git executes programs that a repository's own files name:

- hooks in ``.git/hooks`` (``reference-transaction`` runs on *every* ref update,
  ``post-checkout`` on clones and checkouts, ``pre-commit``, ``post-merge``,
  ``post-index-change`` ...): every call points ``core.hooksPath`` at an empty
  directory gitmedic owns (:func:`hooks_dir`), which git also passes on to the
  git processes it starts itself;
- commands named by config, which ``.git/config`` (or a file it includes) may
  set: ``core.fsmonitor``, ``core.sshCommand``, ``core.askPass``,
  ``credential.*helper``, signing programs, ``remote.*.uploadpack``, the
  ``ext::`` transport, auto-gc: each gets a fixed neutral ``-c`` value;
- drivers that a committed ``.gitattributes`` selects by name and config
  defines (``filter.<name>.clean/smudge/process`` run on checkout, add, status
  and ``git archive``; ``merge.<name>.driver`` on merges; ``diff.<name>.textconv``
  and ``diff.external`` on diffs): the names are read from the repository's own
  config (:func:`_driver_overrides`, cached while the config files are
  unchanged) and each is overridden (filters do nothing, a custom merge driver
  reports a conflict), and diff-producing commands get ``--no-ext-diff
  --no-textconv``. The user's global config is the operator's and is kept;
  the system config is skipped (``GIT_CONFIG_NOSYSTEM``).

Secrets (the forge token) reach git through ``GIT_CONFIG_COUNT`` variables in
the child's environment (:func:`run`'s ``secret_config``), never its argv,
which ``/proc/<pid>/cmdline`` shows to every user of the machine.

The surface is four functions: :func:`run` (text) and :func:`run_bytes`, which
never raise (callers turn failures into their own errors), :func:`output` (stdout,
or ``CalledProcessError``) and :func:`start` (a long-lived ``cat-file --batch``).
An import-linter contract (only this module, and kustomize's for kubectl, import
``subprocess``) and tests/security/test_git_gateway.py keep every other module
from spawning git.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["CompletedProcess", "Popen", "hooks_dir", "output", "run", "run_bytes", "start"]

CompletedProcess = subprocess.CompletedProcess
Popen = subprocess.Popen

# Config keys whose value is a program git would run; each gets a neutral value.
NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.sshCommand", "ssh"),  # GIT_SSH_COMMAND (the operator's environment) still wins
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty value empties the helper list read so far
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("protocol.ext.allow", "never"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# Environment that must not steer git to another repository or program.
_DROPPED_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_EXTERNAL_DIFF",
    }
)
_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
}
# Subcommands that may print a diff: a configured external diff or textconv must not run.
_DIFF_FLAGS = {
    "diff": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
}
_DRIVER_NEUTRAL = {
    ("filter", "clean"): "",
    ("filter", "smudge"): "",
    ("filter", "process"): "",
    ("filter", "required"): "false",
    ("merge", "driver"): "false",  # a conflict, never the configured program
    ("diff", "textconv"): "",
    ("diff", "command"): "",
    ("remote", "uploadpack"): "git-upload-pack",
    ("remote", "receivepack"): "git-receive-pack",
}
_driver_cache: dict[Path, tuple[tuple[object, ...], tuple[tuple[str, str], ...]]] = {}
_hooks: Path | None = None


def run(
    cwd: Path | None,
    subcommand: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    secret_config: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``git -C cwd <safety> subcommand args``, text output captured; never raises on failure."""
    return subprocess.run(
        _argv(cwd, subcommand, args),
        capture_output=True,
        text=True,
        input=input,
        env=_environment(env, secret_config),
        check=False,
    )


def output(
    cwd: Path | None, subcommand: str, *args: str, env: Mapping[str, str] | None = None
) -> str:
    """What git prints, stripped; :class:`subprocess.CalledProcessError` when it fails."""
    proc = run(cwd, subcommand, *args, env=env)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc.stdout.strip()


def run_bytes(
    cwd: Path | None, subcommand: str, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """As :func:`run`, with output as bytes (blobs, archives, ``-z`` listings)."""
    return subprocess.run(
        _argv(cwd, subcommand, args), capture_output=True, env=_environment(env, None), check=False
    )


def start(cwd: Path, subcommand: str, *args: str) -> subprocess.Popen[bytes]:
    """A long-lived git process with pipes for stdin and stdout (``cat-file --batch``)."""
    return subprocess.Popen(
        _argv(cwd, subcommand, args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_environment(None, None),
    )


def _argv(cwd: Path | None, subcommand: str, args: Sequence[str]) -> list[str]:
    config = [("core.hooksPath", str(hooks_dir())), *NEUTRAL_CONFIG]
    if cwd is not None:
        config += _driver_overrides(cwd)
    flags = [f for key, value in config for f in ("-c", f"{key}={value}")]
    where = ["-C", str(cwd)] if cwd is not None else []
    return ["git", *where, *flags, subcommand, *_DIFF_FLAGS.get(subcommand, ()), *args]


def _environment(
    extra: Mapping[str, str] | None, secret_config: Mapping[str, str] | None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.setdefault("GIT_PROXY_COMMAND", "")  # set (even empty), it outranks core.gitProxy
    env.update(extra or {})
    env.update(_FIXED_ENV)
    count = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    for key, value in (secret_config or {}).items():
        env[f"GIT_CONFIG_KEY_{count}"], env[f"GIT_CONFIG_VALUE_{count}"] = key, value
        count += 1
    if secret_config:
        env["GIT_CONFIG_COUNT"] = str(count)
    return env


def hooks_dir() -> Path:
    """An empty directory only this user can write: ``core.hooksPath`` of every call.

    One stable directory per user (so a killed process leaves nothing behind),
    used only when it is a real directory owned by us, closed to others and
    empty; otherwise a fresh private one.
    """
    global _hooks
    if _hooks is None or not _is_empty_private_dir(_hooks):
        stable = Path(tempfile.gettempdir()) / f"gitmedic-no-hooks-{os.getuid()}"
        try:
            stable.mkdir(mode=0o500)
        except FileExistsError:
            pass
        except OSError:
            stable = Path(tempfile.mkdtemp(prefix="gitmedic-no-hooks-"))
        if not _is_empty_private_dir(stable):
            stable = Path(tempfile.mkdtemp(prefix="gitmedic-no-hooks-"))
            stable.chmod(0o500)
        _hooks = stable
    return _hooks


def _is_empty_private_dir(path: Path) -> bool:
    try:
        st = path.lstat()
        return (
            stat.S_ISDIR(st.st_mode)
            and st.st_uid == os.getuid()
            and not st.st_mode & 0o022
            and not os.listdir(path)
        )
    except OSError:
        return False


def _driver_overrides(cwd: Path) -> tuple[tuple[str, str], ...]:
    """Neutral values for every driver and remote program the repository's config defines."""
    found = _config_files(cwd)
    if found is None:
        return ()
    top, files = found
    key = tuple(_stat_key(f) for f in files)
    cached = _driver_cache.get(files[0])
    if cached is not None and cached[0] == key:
        return cached[1]
    listing = subprocess.run(
        ["git", "-C", str(top), "config", "--list", "-z", "--show-scope", "--includes"],
        capture_output=True,
        text=True,
        env=_environment(None, None),
        check=False,
    ).stdout
    overrides, includes = _neutralise(listing)
    if not includes:  # an included file can change unseen: scan again next time
        _driver_cache[files[0]] = (key, overrides)
    return overrides


def _neutralise(listing: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    """Overrides for ``git config --list -z --show-scope`` entries of the repository's scopes."""
    found: dict[str, str] = {}
    includes = False
    fields = listing.split("\0")  # scope, key and value, scope, key and value, ...
    for scope, entry in zip(fields[::2], fields[1::2], strict=False):
        name = entry.split("\n", 1)[0].lower()
        if scope not in ("local", "worktree") or not name:
            continue
        includes = includes or name.startswith(("include.", "includeif."))
        section, _, tail = name.partition(".")
        sub, _, leaf = tail.rpartition(".")
        if sub and (section, leaf) in _DRIVER_NEUTRAL:
            found[f"{section}.{sub}.{leaf}"] = _DRIVER_NEUTRAL[(section, leaf)]
            if section == "filter":
                found[f"filter.{sub}.required"] = "false"
    return tuple(sorted(found.items())), includes


def _config_files(cwd: Path) -> tuple[Path, tuple[Path, ...]] | None:
    """The repository's top folder and its ``config`` (and ``config.worktree``), found
    without git from ``cwd`` (or the nearest folder above it)."""
    start = cwd.absolute()
    for folder in (start, *start.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return folder, (dotgit / "config", dotgit / "config.worktree")
        if dotgit.is_file():
            text = dotgit.read_text(errors="replace").strip()
            gitdir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            common = gitdir
            if (gitdir / "commondir").is_file():
                common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
            return folder, (common / "config", gitdir / "config.worktree")
        if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
            return folder, (folder / "config",)  # a bare repository
    return None


def _stat_key(path: Path) -> tuple[object, ...]:
    try:
        st = path.stat()
    except OSError:
        return ()
    return (st.st_mtime_ns, st.st_size, st.st_ino)
