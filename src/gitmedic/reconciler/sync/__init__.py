"""GitOps sync watchers: is commit SHA deployed and healthy, progressing, or failed?

One protocol (``SyncWatcher.check(sha) -> SyncState``), one wait
(``wait_deployed`` on an injected clock), and watchers for Argo CD (REST API or
Application custom resource) and Flux (Kustomization custom resource).
"""

from gitmedic.reconciler.sync.argo_rules import assess_application
from gitmedic.reconciler.sync.argocd_rest import ArgoCDRestWatcher
from gitmedic.reconciler.sync.flux_rules import assess_kustomization
from gitmedic.reconciler.sync.kube_cr import (
    CustomObjectsReader,
    CustomResourceWatcher,
    argocd_application_watcher,
    flux_kustomization_watcher,
)
from gitmedic.reconciler.sync.state import (
    SyncPhase,
    SyncState,
    SyncWatcher,
    WaitResult,
    revision_matches,
    wait_deployed,
)

__all__ = [
    "ArgoCDRestWatcher",
    "CustomObjectsReader",
    "CustomResourceWatcher",
    "SyncPhase",
    "SyncState",
    "SyncWatcher",
    "WaitResult",
    "argocd_application_watcher",
    "assess_application",
    "assess_kustomization",
    "flux_kustomization_watcher",
    "revision_matches",
    "wait_deployed",
]
