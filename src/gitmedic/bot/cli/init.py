"""``gitmedic init PATH``: scaffold ``.gitmedic/`` and the GitHub workflow in a manifest repo.

With no app flags, the apps are discovered: one per environment the repository's
Argo CD and Flux objects deploy, else per kustomize root, chart and manifest
folder (:mod:`gitmedic.bot.discover.apps`), printed with why each was made and
what was left out. ``--path`` (with ``--name``, ``--namespace``) writes that one
app instead.

Existing files are kept unless ``--force`` is given: init can be re-run after an
upgrade to add what is missing, and says what it created, what it kept and what
it overwrote. The app's ``--path`` must be a folder of the repo, so a typo does
not produce a config that watches nothing. A kept config that does not load is refused
before anything is written, each problem named with its line. It ends with the next steps.

The workflow it writes runs the gitmedic GitHub Action of the version that wrote
it; the third-party actions in it are pinned by commit SHA.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from gitmedic import __version__
from gitmedic.bot.common.exits import EXIT_OK, UsageError
from gitmedic.bot.controller.config_check import check_config

FILES = {
    ".gitmedic/config.yaml": "config.yaml",
    ".gitmedic/playbooks/README.md": "playbooks-index.md",
    ".github/workflows/gitmedic-detect.yml": "gitmedic-detect.yml",
}
OUTCOMES = ".gitmedic/outcomes.jsonl"

NEXT_STEPS = """\
Next steps:
  1. Edit {repo}/.gitmedic/config.yaml: the GitOps engine (engine.kind argocd, argocd-cr
     or flux) and what verifies a merged fix (oracles).
  2. Check it: gitmedic memory check {repo}
  3. Try the detectors: gitmedic detect {repo}
  4. Commit .gitmedic/ and .github/workflows/gitmedic-detect.yml and open a pull request:
     the workflow annotates findings on its diff.
  5. Run the bot: the Helm chart charts/gitmedic (README: "Install"), with a GitHub App.
"""


def run_init(args: argparse.Namespace) -> int:
    repo = Path(args.path)
    if not repo.is_dir():
        raise UsageError(f"{repo}: not a directory")
    if not args.force:  # a kept config that does not load: said now, nothing written
        check_config(repo, "init keeps an existing config: fix it, or --force replaces it")
    if args.app_path or args.name or args.namespace:
        apps = _flagged_app(repo, args)
    else:
        from gitmedic.bot.discover.apps import discovered_apps

        apps, report = discovered_apps(repo)
        print("\n".join(report), end="\n\n")
    for rel, template in FILES.items():
        _write(repo, rel, _render(template, {"apps": apps}), force=args.force)
    outcomes = repo / OUTCOMES
    if not outcomes.exists():
        outcomes.touch()
        print(f"created  {OUTCOMES}")
    print()
    print(NEXT_STEPS.format(repo=repo), end="")
    return EXIT_OK


def _flagged_app(repo: Path, args: argparse.Namespace) -> str:
    app_path = (args.app_path or ".").strip("/") or "."
    if not (repo / app_path).is_dir():
        raise UsageError(f"--path {app_path}: no such folder in {repo}")
    values = {
        "name": args.name or _app_name(repo),
        "path": app_path,
        "namespace": args.namespace or "default",
    }
    return _render("app.yaml", values)


def _render(template: str, values: dict[str, str]) -> str:
    text = (resources.files("gitmedic.bot") / "templates" / "init" / template).read_text()
    if template == "config.yaml":
        return text.replace("{apps}", values["apps"])
    if template == "app.yaml":
        return text.format(**values)
    # The workflow holds GitHub expressions (``${{ }}``): no str.format there.
    text = text.replace("{gitmedic_action_ref}", action_ref(__version__))
    return text.replace("{gitmedic_version}", __version__)


def action_ref(version: str) -> str:
    """The Action's ref for this gitmedic: its release tag, or ``main`` for a build that
    is not a release (a .dev or local version has no tag to point at)."""
    released = all(part.isdigit() for part in version.split("."))
    return f"v{version}" if released else "main"


def _write(repo: Path, rel: str, text: str, *, force: bool) -> None:
    target = repo / rel
    existed = target.exists()
    if existed and not force:
        print(f"kept     {rel} (exists; --force overwrites it)")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    print(f"{'replaced' if existed else 'created '} {rel}")


def _app_name(repo: Path) -> str:
    name = "".join(c if c.isalnum() else "-" for c in repo.resolve().name.lower()).strip("-")
    return name[:63] or "app"
