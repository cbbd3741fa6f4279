"""GitOps sync watchers: is commit SHA deployed and healthy, progressing, or failed?

One protocol (``SyncWatcher.check(sha) -> SyncState``, one question per call,
never a wait: the transaction's sync wait asks it once per step), and watchers
for Argo CD (REST API or Application custom resource) and Flux (Kustomization
custom resource).
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
    revision_matches,
)

__all__ = [
    "ArgoCDRestWatcher",
    "CustomObjectsReader",
    "CustomResourceWatcher",
    "SyncPhase",
    "SyncState",
    "SyncWatcher",
    "argocd_application_watcher",
    "assess_application",
    "assess_kustomization",
    "flux_kustomization_watcher",
    "revision_matches",
]
