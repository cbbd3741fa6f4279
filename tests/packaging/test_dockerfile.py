"""The Dockerfile, read structurally (no container engine runs in CI here).

What is checked is what a platform team's admission policy and the chart rely
on: several stages (helm built in its own, gitmedic's venv in another), a final
stage without build tools or Go that runs as a numeric non-root user, `gitmedic
serve` as the entrypoint, the state directory a volume, and nothing written
outside it and /tmp (the chart's read-only root).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import yaml

from tests.support.tools import ROOT

BUILD_TOOLS = ("gcc", "g++", "make", "build-essential", "python3-dev", "pip install build")


@dataclass
class Stage:
    base: str
    name: str = ""
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, op: str) -> list[str]:
        return [arg for o, arg in self.instructions if o == op]


def stages() -> list[Stage]:
    text = (ROOT / "Dockerfile").read_text()
    logical = re.sub(
        r"\\\n",
        " ",
        "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")),
    )
    out: list[Stage] = []
    for line in filter(None, (raw.strip() for raw in logical.splitlines())):
        op, _, arg = line.partition(" ")
        if op.upper() == "FROM":
            base, _, name = arg.partition(" AS ")
            out.append(Stage(base.strip(), name.strip()))
        elif out:
            out[-1].instructions.append((op.upper(), " ".join(arg.split())))
    return out


def _env(stage: Stage) -> dict[str, str]:
    pairs = " ".join(stage.all("ENV")).split()
    return dict(p.split("=", 1) for p in pairs)


def test_multi_stage_and_the_final_stage_has_no_build_tools() -> None:
    tools, build, final = stages()
    assert (tools.name, build.name, final.name) == ("tools", "build", "")
    assert tools.base == build.base == final.base == "${PYTHON_IMAGE}"
    run = " ".join(final.all("RUN"))
    assert "--no-install-recommends git ca-certificates" in run
    assert "python3 -m pip uninstall --yes --quiet pip setuptools wheel" in run
    assert not [tool for tool in BUILD_TOOLS if tool in run]
    # only helm's and kustomize's binaries from the tools stage (no Go toolchain), and the venv
    assert final.all("COPY") == [
        "--from=tools /opt/tools/helm /opt/tools/kustomize /usr/local/bin/",
        "--from=build /opt/gitmedic /opt/gitmedic",
    ]
    for step in tools.all("RUN"):  # each Go build leaves no toolchain in its layer
        assert "rm -rf /tmp/gopath /tmp/gocache /opt/go" in step
    built = " ".join(tools.all("RUN"))
    assert "/opt/tools/helm version" in built and "/opt/tools/kustomize version" in built
    assert "pip uninstall --yes pip setuptools" in " ".join(build.all("RUN"))


def test_git_is_installed_and_perl_purged_in_one_step() -> None:
    """A deletion in a later step would hide perl from the running image but ship it in
    the layer below; in the step that installs git, no layer ever carries it."""
    final = stages()[-1]
    (step,) = [run for run in final.all("RUN") if "apt-get install" in run]
    assert step.index("install --yes --no-install-recommends git") < step.index(
        "dpkg --purge --force-depends"
    )
    purged = re.search(r"\$2 ~ /\^\((.*?)\)\$/", step)
    assert purged and set(purged[1].split("|")) == {
        "perl",
        "perl-modules-.*",
        "libperl5.*",
        "liberror-perl",
    }
    # nor apt's downloads: a debootstrap base has no docker-clean hook that deletes them
    assert "/var/cache/apt/archives/*.deb" in step[step.index("dpkg --purge") :]
    # git's server-side programs are never unpacked (dpkg's path-exclude, before install)
    assert step.index("path-exclude") < step.index("apt-get install")
    for program in ("git-daemon", "git-shell", "git-http-backend", "scalar"):
        assert f"/usr/lib/git-core/{program}" in step


def test_runs_serve_as_a_numeric_non_root_user() -> None:
    final = stages()[-1]
    (user,) = final.all("USER")
    uid, gid = (int(part) for part in user.split(":"))
    assert uid >= 10000 and gid >= 10000
    (entrypoint,) = final.all("ENTRYPOINT")
    assert json.loads(entrypoint) == ["gitmedic", "serve"]


def test_the_state_directory_is_a_volume_and_nothing_else_is_written() -> None:
    final = stages()[-1]
    env = _env(final)
    (volume,) = final.all("VOLUME")
    assert json.loads(volume) == [env["GITMEDIC_STATE_DIR"]]
    assert env["HOME"] == env["GITMEDIC_STATE_DIR"]
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "compileall" in " ".join(stages()[1].all("RUN"))


def test_the_chart_runs_the_image_as_it_is_built() -> None:
    final = stages()[-1]
    uid = int(final.all("USER")[0].split(":")[0])
    template = (ROOT / "charts/gitmedic/templates/deployment.yaml").read_text()
    assert f"runAsUser: {uid}" in template and f"fsGroup: {uid}" in template
    assert f"mountPath: {_env(final)['GITMEDIC_STATE_DIR']}" in template
    assert "mountPath: /tmp" in template
    values = yaml.safe_load((ROOT / "charts/gitmedic/values.yaml").read_text())
    assert values["image"]["repository"] == "ghcr.io/gitmedic/gitmedic"


def test_the_build_context_is_only_what_the_build_copies() -> None:
    ignored = [
        line for line in (ROOT / ".dockerignore").read_text().splitlines() if line[:1] != "#"
    ]
    assert ignored[0] == "*"
    kept = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    copied = {
        src
        for stage in stages()
        for arg in stage.all("COPY")
        if not arg.startswith("--from=")
        for src in arg.split()[:-1]
    }
    helpers = {
        "tools/image/go_toolchain.py",
        "tools/image/extras_requirements.py",
        "tools/image/trim.py",
    }
    assert kept == {"pyproject.toml", "README.md", "LICENSE", "src"} | helpers == copied
