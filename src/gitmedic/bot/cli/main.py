"""The ``gitmedic`` command line (a contract: users' scripts and CI depend on it).

Start-up time is a feature: ``gitmedic detect`` runs on every pull request, so
this module imports only argparse and the exit codes (:mod:`gitmedic.bot.common.exits`, which the
commands share without importing the command line); each command imports what it
needs when it runs, and heavy clients (kubernetes, PyGithub, litellm, FastAPI) only
inside the commands that use them.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from gitmedic.bot.common.exits import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    UsageError,
)

Command = Callable[[argparse.Namespace], int]


def _detect(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.detect import run_detect

    return run_detect(args)


def _init(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.init import run_init

    return run_init(args)


def _memory_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gitmedic.bot.memory.guard import check_memory

    repo = Path(args.path)
    if not (repo / ".gitmedic").is_dir():
        raise UsageError(f"{repo}: no .gitmedic/ folder (run: gitmedic init {repo})")
    problems = check_memory(repo, base_rev=args.base)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem{'s' * (len(problems) != 1)} in {repo / '.gitmedic'}")
    return EXIT_FINDINGS if problems else EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.demo import run_demo

    return run_demo(args)


def _prs(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.prs import run_prs

    return run_prs(args)


def _run(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.run import run_run

    return run_run(args)


def _serve(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.serve import run_serve

    return run_serve(args)


def _sim_status(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.sim import run_sim_status

    return run_sim_status(args)


def _charts_add(args: argparse.Namespace) -> int:
    from gitmedic.bot.cli.charts import run_charts_add

    return run_charts_add(args)


def _completion(args: argparse.Namespace) -> int:
    import shtab

    print(shtab.complete(build_parser(), shell=args.shell), end="")
    return 0


# What shtab.FILE is, without importing shtab for every command: completes file names.
_FILES = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}


def _complete_paths(parser: argparse.ArgumentParser) -> None:
    """Positional paths and --path-like options complete file names in every shell."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _complete_paths(sub)
        elif action.dest in {"path", "repo", "app_path", "baseline", "write_baseline", "packages"}:
            action.complete = _FILES  # type: ignore[attr-defined]


class _VersionAction(argparse.Action):
    """argparse's ``version`` action, but the version is looked up only when asked for
    (the lookup imports importlib.metadata: start-up time every other command saves)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from gitmedic import __version__

        parser._print_message(f"gitmedic {__version__}\n", sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gitmedic",
        description="An SRE bot for GitOps apps: detects faults, fixes them by pull request.",
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="show program's version number and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("detect", help="run the detectors over manifests or a live cluster")
    p.add_argument("path", nargs="?", help="manifest file, folder or repo")
    p.add_argument("--rev", help="read PATH at this git revision (no checkout)")
    p.add_argument("--namespace", default=None, help="namespace for objects that name none")
    p.add_argument(
        "--app", metavar="NAME", help="only this app of the config (one release of a shared file)"
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="text for people, json or sarif for tools, github for workflow annotations",
    )
    p.add_argument(
        "--detector", action="append", default=[], metavar="ID", help="run only these (repeat)"
    )
    p.add_argument(
        "--exclude", action="append", default=[], metavar="ID", help="never run these (repeat)"
    )
    p.add_argument(
        "--sarif", metavar="FILE", help="also write the findings as SARIF to FILE (same run)"
    )
    p.add_argument(
        "--summary",
        metavar="FILE",
        help="also append every finding as a Markdown table to FILE ($GITHUB_STEP_SUMMARY)",
    )
    p.add_argument("--live", action="store_true", help="read a live cluster (read-only)")
    p.add_argument("--context", help="kubeconfig context for --live")
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "critical"),
        default="warning",
        help="lowest severity that makes the exit code 1 (default: warning)",
    )
    p.add_argument("--list", action="store_true", help="list the detectors and exit")
    p.add_argument(
        "--baseline", metavar="FILE", help="accepted findings: only findings not in FILE fail"
    )
    p.add_argument(
        "--write-baseline", metavar="FILE", help="record the current findings in FILE, exit 0"
    )
    p.add_argument(
        "--kubernetes-version",
        metavar="X.Y",
        help="the Kubernetes version to validate against (default: the config's, else newest)",
    )
    p.set_defaults(func=_detect)

    p = sub.add_parser("init", help="scaffold .gitmedic/ and the GitHub workflow in a repo")
    p.add_argument("path", help="the manifest repository")
    p.add_argument("--name", help="the app's name (default: the folder's name)")
    p.add_argument("--path", dest="app_path", help="the app's manifest folder in the repo")
    p.add_argument("--namespace", help="namespace for objects that name none")
    p.add_argument("--force", action="store_true", help="overwrite the files init writes")
    p.set_defaults(func=_init)

    p = sub.add_parser("memory", help="operational memory in a manifest repo")
    memory = p.add_subparsers(dest="memory_command", metavar="COMMAND")
    memory.required = True
    p = memory.add_parser("check", help="validate .gitmedic/ (the guard the bot applies)")
    p.add_argument("path", help="the manifest repository")
    p.add_argument("--base", help="a revision outcomes.jsonl must only grow from")
    p.set_defaults(func=_memory_check)

    p = sub.add_parser("prs", help="list the pull requests of a repo's local forge")
    p.add_argument("path", help="the repo, or any path inside it")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_prs)

    p = sub.add_parser(
        "serve", help="the GitHub webhook service with the monitor in the same process"
    )
    p.add_argument("--repo", help="the manifest repo of the local forge (env GITMEDIC_REPO)")
    p.add_argument(
        "--state-dir",
        help="where deliveries, the journal and pending work persist (GITMEDIC_STATE_DIR)",
    )
    p.add_argument("--host", help="address to bind (GITMEDIC_HOST, default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to bind (GITMEDIC_PORT, default 8080)")
    p.add_argument("--max-body-bytes", type=int, help="refuse larger webhook bodies (413)")
    p.add_argument("--log-level", help="debug, info, warning or error (GITMEDIC_LOG_LEVEL)")
    p.add_argument(
        "--watch", action="append", metavar="PATH", help="an app folder to watch (repeat)"
    )
    p.add_argument("--forge", choices=("local", "github"), help="GITMEDIC_FORGE, default local")
    p.add_argument(
        "--cluster",
        choices=("sim", "kube"),
        help="GITMEDIC_CLUSTER; default sim, kube with --forge github (which refuses sim)",
    )
    p.add_argument("--app", help="act on this app of .gitmedic/config.yaml only (default: all)")
    p.add_argument("--interval", type=float, help="monitor interval, s (GITMEDIC_INTERVAL, 60)")
    p.add_argument("--path", help="the app's folder when the repo has no .gitmedic/config.yaml")
    p.add_argument("--namespace", help="namespace for objects that name none")
    p.add_argument(
        "--shard-leases",
        metavar="NAMESPACE",
        help="replicas divide the apps with Leases in this namespace (GITMEDIC_SHARD_LEASES)",
    )
    p.add_argument(
        "--shard-lease-seconds",
        type=int,
        help="the Leases' duration (GITMEDIC_SHARD_LEASE_SECONDS, default 15)",
    )
    p.set_defaults(func=_serve)

    p = sub.add_parser("run", help="the whole loop against one manifest repo, every app of it")
    p.add_argument("repo", help="the manifest repository (a git work tree)")
    p.add_argument("--path", help="the app's folder in the repo (default: every app, else all)")
    p.add_argument("--namespace", help="namespace for objects that name none")
    p.add_argument(
        "--cluster",
        choices=("sim", "kube"),
        help="default sim; kube with --forge github (which refuses sim)",
    )
    p.add_argument(
        "--forge",
        choices=("local", "github"),
        default="local",
        help="where PRs go: local (a git repo, no GitHub) or github (default local)",
    )
    p.add_argument("--app", help="act on this app of .gitmedic/config.yaml only (default: all)")
    p.add_argument("--once", action="store_true", help="until healthy or out of attempts")
    p.add_argument("--interval", type=float, help="seconds between evaluations (default 10)")
    p.add_argument("--settle", type=float, help="--once: healthy this long is healthy (300)")
    p.add_argument("--json", action="store_true", help="print the incidents as JSON")
    p.set_defaults(func=_run)

    p = sub.add_parser("demo", help="the embedded end-to-end demonstration, no set-up needed")
    p.set_defaults(func=_demo)

    p = sub.add_parser("completion", help="print a shell completion script for gitmedic")
    p.add_argument(
        "shell",
        choices=("bash", "zsh", "tcsh"),
        help="e.g. `source <(gitmedic completion bash)` in ~/.bashrc",
    )
    p.set_defaults(func=_completion)

    p = sub.add_parser("charts", help="the chart cache that renders remote charts offline")
    charts = p.add_subparsers(dest="charts_command", metavar="SUBCOMMAND")
    charts.required = True
    p = charts.add_parser(
        "add", help="add chart packages (from helm pull) as charts of a declared repository"
    )
    p.add_argument(
        "--repository",
        required=True,
        metavar="URL",
        help="the repository the manifests declare for them (https://... or oci://...)",
    )
    p.add_argument("packages", nargs="+", metavar="PACKAGE", help="a chart package (.tgz)")
    p.set_defaults(func=_charts_add)

    p = sub.add_parser("sim", help="the simulated cluster and GitOps engine")
    sim_sub = p.add_subparsers(dest="sim_command", metavar="SUBCOMMAND")
    sim_sub.required = True
    p = sim_sub.add_parser("status", help="what the sim shows with PATH deployed at REV")
    p.add_argument("path", help="manifest file, folder or repo")
    p.add_argument("--rev", help="deploy PATH at this git revision (no checkout)")
    p.add_argument("--namespace", default=None, help="namespace for objects that name none")
    p.add_argument(
        "--app", metavar="NAME", help="the app of the config at PATH (one release of a file)"
    )
    p.add_argument("--seconds", type=float, default=600.0, help="simulated seconds to run")
    p.add_argument("--seed", type=int, default=0, help="seed of the sim's randomness")
    p.add_argument(
        "--allow-image",
        action="append",
        default=[],
        metavar="IMAGE",
        help="an image the sim registry has besides those of the baseline history (repeat)",
    )
    p.add_argument("--json", action="store_true", help="print objects, entry points, alerts, app")
    p.set_defaults(func=_sim_status)
    _complete_paths(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from gitmedic.reconciler.outbound import ScrubbingStream

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(out), ScrubbingStream(err)
    try:
        return _run_command(args)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            _quiet_stdout()
        sys.stdout, sys.stderr = out, err


def _run_command(args: argparse.Namespace) -> int:
    """The command, its failures as exit codes; what it prints is redacted (see main)."""
    func: Command = args.func
    try:
        return int(func(args))
    except UsageError as exc:
        print(f"gitmedic: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gitmedic detect --list | head`: the reader is gone
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except ModuleNotFoundError as exc:
        from gitmedic.bot.common.extras import missing_extra_message

        message = missing_extra_message(exc, args.command)
        if message is None:
            return _internal_error()
        print(f"gitmedic: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except Exception:
        return _internal_error()


def _quiet_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's last flush of a closed pipe is silent."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def _internal_error() -> int:
    """A bug of ours: exit 2 (error), never 1 (which means "findings")."""
    traceback.print_exc()
    print("gitmedic: internal error (the traceback above is a bug report)", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
