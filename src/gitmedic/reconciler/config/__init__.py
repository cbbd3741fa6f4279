"""``.gitmedic/config.yaml``: which apps gitmedic watches, and how it may act on them.

The file is validated against ``schema.json`` (shipped with gitmedic, so editors
complete it), then read into frozen dataclasses with the schema's defaults. Every
violation is reported with its location (``apps[0].engine.kind``) at once, so a
person fixes the file in one go; nothing is acted on with a config that fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

CONFIG_PATH = ".gitmedic/config.yaml"
# An app's settings, as written, to the same with what its ``deployed_by`` manifest says.
Deployer = Callable[[Mapping[str, Any]], Mapping[str, Any]]


Location = tuple[str | int, ...]  # a path into the configuration: ("apps", 0, "name")


class ConfigError(Exception):
    """The configuration file is missing, unreadable or invalid; the message lists why.

    ``problems`` holds each violation with its location in the data, so the reader of
    the file (:mod:`gitmedic.reconciler.manifests.config_file`) can name its line."""

    def __init__(self, message: str, problems: tuple[tuple[Location, str], ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class EngineConfig:
    kind: str = "sim"
    application: str = ""
    namespace: str = ""
    url: str = ""
    token_env: str = "ARGOCD_TOKEN"
    sync_timeout_s: float = 600.0


@dataclass(frozen=True)
class ProbeConfig:
    url: str
    timeout_s: float = 5.0
    max_latency_ms: float | None = None  # slower answers fail the probe


@dataclass(frozen=True)
class OracleConfig:
    window_s: float = 120.0
    interval_s: float = 10.0
    failure_limit: int = 1
    alerts_url: str = ""
    alerts_api: str = "alertmanager"
    probes: tuple[ProbeConfig, ...] = ()


@dataclass(frozen=True)
class ValuesSource:
    """Values held in a manifest rather than a values file: a Flux HelmRelease's inline
    ``spec.values`` or an Argo CD Application's ``helm.valuesObject`` and ``parameters``
    (editable there), or a YAML string: a ConfigMap's key named by a ``valuesFrom``, an
    Application's ``helm.values``."""

    file: str  # repo-relative file declaring the object
    kind: str
    name: str
    namespace: str
    # where the values sit in the object: spec.values, data.<key>; () the whole file (one
    # a kustomize configMapGenerator makes the ConfigMap of)
    prefix: tuple[str, ...]
    editable: bool = True  # False: a YAML string inside the object, not edited
    parameters: bool = False  # an Argo CD list of helm parameters (--set name=value)


@dataclass(frozen=True)
class HelmConfig:
    values: tuple[str, ...] = ()  # relative to the chart folder, after its values.yaml
    release: str = ""
    sources: tuple[ValuesSource, ...] = ()  # after the values files, in order


@dataclass(frozen=True)
class DeployedBy:
    """The Argo CD Application or Flux HelmRelease the app's settings are read from."""

    file: str
    name: str = ""


@dataclass(frozen=True)
class SimConfig:
    known_good: str = ""  # a revision that ran healthy: what the sim's registry learns from


@dataclass(frozen=True)
class AppConfig:
    name: str
    path: str
    namespace: str = "default"
    engine: EngineConfig = field(default_factory=EngineConfig)
    oracles: OracleConfig = field(default_factory=OracleConfig)
    helm: HelmConfig | None = None  # set: ``path`` is a Helm chart
    deployed_by: DeployedBy | None = None  # path, namespace and helm were read from it
    sim: SimConfig = field(default_factory=SimConfig)
    cluster: str = ""  # set: the cluster it runs on; apps of two clusters share no object

    @property
    def deployer(self) -> str:
        """The HelmRelease or Argo CD Application this app is, when its chart comes from a
        repository: ``path`` is then the deployer's folder, which may hold other releases
        in the same namespace (gitops-istio's three), so ``path`` and ``namespace`` alone
        do not name the app; every reader renders only this one. '' for any other app."""
        return self.deployed_by.name if self.deployed_by and self.helm is None else ""


@dataclass(frozen=True)
class PolicyRule:
    risk: str
    description: str = ""
    strategies: tuple[str, ...] = ()
    detectors: tuple[str, ...] = ()
    playbooks: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    max_changed_lines: int | None = None
    windows: tuple[str, ...] = ()


REVERT_AUTO, REVERT_APPROVAL = "auto", "approval"


@dataclass(frozen=True)
class PolicyConfig:
    """``policy``: taken as written. ``rules`` left out of the file means
    :data:`DEFAULT_RULES`; ``rules: []`` means no rule (every change is medium)."""

    auto_merge: str = "low"
    rules: tuple[PolicyRule, ...] = ()
    # How the revert of gitmedic's own regressing change merges: at once, or on approval.
    revert_regressions: str = REVERT_AUTO

    @property
    def reverts_at_once(self) -> bool:
        return self.revert_regressions == REVERT_AUTO


DEFAULT_RULES = (
    PolicyRule(
        risk="low",
        description="fields restored from Git history",
        strategies=("playbook", "bisect"),
    ),
    PolicyRule(
        risk="low",
        description="guard-checked memory under .gitmedic/",
        strategies=("memory",),
    ),
)
# Without a config file, or with a ``policy`` section that gives no ``rules``.
DEFAULT_POLICY = PolicyConfig(auto_merge="low", rules=DEFAULT_RULES)


@dataclass(frozen=True)
class LlmConfig:
    model: str = ""
    api_key_env: str = ""
    api_base: str = ""
    max_steps: int = 20
    max_tokens: int = 60_000
    max_cost_usd: float = 1.0


@dataclass(frozen=True)
class LeversConfig:
    """The ceilings of the runtime levers (``levers:``), as written."""

    max_replicas: int = 10
    memory_ceiling: str = "8Gi"


@dataclass(frozen=True)
class ChartRepository:
    """A chart repository gitmedic may pull from though the manifests do not declare it;
    ``name``/``namespace``: the Flux source it stands for (a sourceRef declared elsewhere)."""

    url: str
    name: str = ""
    namespace: str = ""


@dataclass(frozen=True)
class ManifestsConfig:
    allow_remote_bases: bool = False  # kustomize resources/bases/components fetched remotely
    chart_repositories: tuple[ChartRepository, ...] = ()  # read from the work tree's config
    # caps on one render (manifests/render_caps.py), read from the work tree's config
    max_rendered_objects: int = 20_000
    max_rendered_bytes: int = 64 * 2**20
    render_timeout_s: int = 60
    render_memory_mib: int = 1024


@dataclass(frozen=True)
class DetectorsConfig:
    """Which detectors run: ``include`` (empty: all) minus ``exclude``."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def chosen(self, ids: list[str]) -> list[str]:
        """The ids of ``ids`` that run, in their order; an unknown id is a ConfigError."""
        unknown = sorted(set(self.include + self.exclude) - set(ids))
        if unknown:
            raise ConfigError(f"{CONFIG_PATH}: detectors names unknown detectors {unknown}")
        return [i for i in ids if (not self.include or i in self.include) and i not in self.exclude]


@dataclass(frozen=True)
class Config:
    apps: tuple[AppConfig, ...]
    policy: PolicyConfig = DEFAULT_POLICY
    manifests: ManifestsConfig = field(default_factory=ManifestsConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    attempts: int = 3
    version: int = 1
    kubernetes_version: str | None = None
    detectors: DetectorsConfig = field(default_factory=DetectorsConfig)
    levers: LeversConfig = field(default_factory=LeversConfig)

    def app(self, name: str) -> AppConfig:
        for app in self.apps:
            if app.name == name:
                return app
        raise ConfigError(f"no app named {name!r} in the configuration")


def schema() -> dict[str, Any]:
    text = (resources.files(__package__) / "schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def find_config(repo: Path) -> Path | None:
    path = repo / CONFIG_PATH
    return path if path.is_file() else None


def parse_config(data: Any, source: str = CONFIG_PATH, deployed: Deployer | None = None) -> Config:
    """``deployed`` fills in an app ``deployed_by`` a manifest from that manifest (the
    manifests layer reads it: :mod:`gitmedic.reconciler.manifests.config_file`); without
    it such an app is refused."""
    problems = violations(data) or _duplicates(data)
    if problems:
        listed = "\n".join(f"  - {_location(where)}: {why}" for where, why in problems)
        raise ConfigError(f"{source} is invalid:\n{listed}", tuple(problems))
    return Config(
        apps=tuple(_app(a, source, deployed) for a in data["apps"]),
        policy=_policy(data.get("policy") or {}),
        llm=LlmConfig(**(data.get("llm") or {})),
        manifests=_manifests(data.get("manifests") or {}),
        attempts=int(data.get("attempts", 3)),
        version=int(data["version"]),
        kubernetes_version=data.get("kubernetes_version"),
        detectors=DetectorsConfig(**_tuples(data.get("detectors") or {})),
        levers=LeversConfig(**(data.get("levers") or {})),
    )


def validate(data: Any) -> list[str]:
    """Every schema violation, as ``location: message``, in document order."""
    return [f"{_location(where)}: {why}" for where, why in violations(data)]


def violations(data: Any) -> list[tuple[Location, str]]:
    """Every schema violation with its location, in document order."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [(tuple(e.absolute_path), e.message) for e in errors]


def _duplicates(data: Mapping[str, Any]) -> list[tuple[Location, str]]:
    """Two apps of one name, or two probes of one URL in an app: each is judged by its
    name (a probe's oracle is named after its URL), so a second would be confused with
    the first in the journal and in the verification window."""
    found: list[tuple[Location, str]] = []
    names: dict[str, int] = {}
    for i, app in enumerate(data["apps"]):
        if app["name"] in names:
            found.append((("apps", i, "name"), f"duplicate app name {app['name']!r}"))
        names.setdefault(app["name"], i)
        urls: set[str] = set()
        for j, probe in enumerate((app.get("oracles") or {}).get("probes") or []):
            if probe["url"] in urls:
                where = ("apps", i, "oracles", "probes", j, "url")
                found.append((where, f"duplicate probe URL {probe['url']!r} in this app"))
            urls.add(probe["url"])
    return found


def _location(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _app(data: Mapping[str, Any], source: str, deployed: Deployer | None) -> AppConfig:
    oracles = dict(data.get("oracles") or {})
    alerts = oracles.pop("alerts", None) or {}
    probes = tuple(ProbeConfig(**p) for p in oracles.pop("probes", []))
    if "deployed_by" in data:
        if deployed is None:
            where = f"{source} is invalid:\n  - apps.{data['name']}.deployed_by"
            file = data["deployed_by"]["file"]
            raise ConfigError(f"{where}: {file} cannot be read without the repository")
        data = deployed(data)
    return AppConfig(
        name=data["name"],
        path=data["path"].strip("/"),
        namespace=data.get("namespace", "default"),
        engine=EngineConfig(**(data.get("engine") or {})),
        helm=_helm(data["helm"]) if "helm" in data else None,
        deployed_by=DeployedBy(**data["deployed_by"]) if "deployed_by" in data else None,
        sim=SimConfig(**(data.get("sim") or {})),
        cluster=str(data.get("cluster") or ""),
        oracles=OracleConfig(
            **oracles,
            alerts_url=alerts.get("url", ""),
            alerts_api=alerts.get("api", "alertmanager"),
            probes=probes,
        ),
    )


def _helm(data: Mapping[str, Any]) -> HelmConfig:
    given = _tuples(data)
    sources = tuple(ValuesSource(**s) for s in given.pop("sources", ()))
    return HelmConfig(**given, sources=sources)


def _manifests(data: Mapping[str, Any]) -> ManifestsConfig:
    repos = tuple(ChartRepository(**r) for r in data.get("chart_repositories") or ())
    return ManifestsConfig(**{**data, "chart_repositories": repos})


def _policy(data: Mapping[str, Any]) -> PolicyConfig:
    given = data.get("rules")
    rules = DEFAULT_RULES if given is None else tuple(PolicyRule(**_tuples(r)) for r in given)
    return PolicyConfig(
        auto_merge=data.get("auto_merge", "low"),
        rules=rules,
        revert_regressions=data.get("revert_regressions", REVERT_AUTO),
    )


def _tuples(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
