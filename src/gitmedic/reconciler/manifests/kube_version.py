"""The Kubernetes version charts are rendered for (``helm template --kube-version``).

Charts declare ``kubeVersion`` constraints (podinfo: ``>=1.23.0-0``) and branch on
``.Capabilities.KubeVersion``; helm's own default is the version of the client
libraries it was built with, which for a helm built by ``go install`` is v1.20,
so real charts refuse to render. The version is therefore always given, chosen in
this order:

1. the version a person asks for on the command line (``detect
   --kubernetes-version``);
2. the live cluster's, once a real cluster is connected (``run``/``serve
   --cluster kube`` record it here before anything renders: every render of that
   process then matches what the engine will apply to);
3. ``kubernetes_version`` of the repository's ``.gitmedic/config.yaml``, read by
   the loader as of the revision it reads (never passed on as if asked, so the
   cluster's wins over it);
4. :data:`DEFAULT_KUBE_VERSION`, a current release.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_KUBE_VERSION", "cluster_version", "record_cluster_version", "render_version"]

DEFAULT_KUBE_VERSION = "1.33"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")

# The connected cluster's version: one cluster per process (``run --cluster kube``).
_cluster: list[str] = []


def record_cluster_version(git_version: str) -> str | None:
    """Remember the live cluster's version (``v1.31.4-gke.100`` -> ``1.31.4``); an answer
    that is no version is ignored (None), and renders keep the next choice."""
    match = _VERSION.match(git_version.strip())
    if match is None:
        return None
    version = ".".join(p for p in match.groups() if p is not None)
    _cluster[:] = [version]
    return version


def cluster_version() -> str | None:
    return _cluster[0] if _cluster else None


def forget_cluster_version() -> None:
    _cluster.clear()


def render_version(asked: str | None, configured: str | None = None) -> str:
    """The version ``helm template`` renders for (see the module's order)."""
    return asked or cluster_version() or configured or DEFAULT_KUBE_VERSION
