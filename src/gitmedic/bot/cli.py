"""The ``gitmedic`` command line (a contract: users' scripts and CI depend on it).

Start-up time is a feature: ``gitmedic detect`` runs on every pull request, so
this module imports only argparse; each command imports what it needs when it
runs, and heavy clients (kubernetes, PyGithub, litellm, FastAPI) only inside the
commands that use them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

Command = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """Bad input from the command line: printed as ``gitmedic: error: ...``, exit 2."""


def _detect(args: argparse.Namespace) -> int:
    from gitmedic.bot.detect_cmd import run_detect

    return run_detect(args)


def _demo(args: argparse.Namespace) -> int:
    from gitmedic.bot.demo import run_demo

    return run_demo(args)


def _sim_status(args: argparse.Namespace) -> int:
    from gitmedic.bot.sim_cmd import run_sim_status

    return run_sim_status(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gitmedic",
        description="An SRE bot for GitOps apps: detects faults, fixes them by pull request.",
    )
    from gitmedic import __version__

    parser.add_argument("--version", action="version", version=f"gitmedic {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("detect", help="run the detectors over manifests or a live cluster")
    p.add_argument("path", nargs="?", help="manifest file, folder or repo")
    p.add_argument("--rev", help="read PATH at this git revision (no checkout)")
    p.add_argument("--namespace", default=None, help="namespace for objects that name none")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument(
        "--detector", action="append", default=[], metavar="ID", help="run only these (repeat)"
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
    p.set_defaults(func=_detect)

    p = sub.add_parser("demo", help="the embedded end-to-end demonstration, no set-up needed")
    p.set_defaults(func=_demo)

    p = sub.add_parser("sim", help="the simulated cluster and GitOps engine")
    sim_sub = p.add_subparsers(dest="sim_command", metavar="SUBCOMMAND")
    sim_sub.required = True
    p = sim_sub.add_parser("status", help="what the sim shows with PATH deployed at REV")
    p.add_argument("path", help="manifest file, folder or repo")
    p.add_argument("--rev", help="deploy PATH at this git revision (no checkout)")
    p.add_argument("--namespace", default=None, help="namespace for objects that name none")
    p.add_argument("--seconds", type=float, default=600.0, help="simulated seconds to run")
    p.add_argument("--seed", type=int, default=0, help="seed of the sim's randomness")
    p.add_argument(
        "--allow-image", action="append", default=[], metavar="IMAGE",
        help="an image the sim registry has besides those of the baseline history (repeat)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print objects, entry points, alerts, app")
    p.set_defaults(func=_sim_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Command = args.func
    try:
        return int(func(args))
    except UsageError as exc:
        print(f"gitmedic: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
