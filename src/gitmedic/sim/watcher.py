"""The sim's sync watcher: "is commit SHA deployed?" asked of the sim's Argo CD stand-in.

It implements the reconciler's ``SyncWatcher`` protocol over the engine's
Application object and judges that object with the very rule the real Argo CD
watchers use (:func:`gitmedic.reconciler.sync.argo_rules.assess_application`),
so "deployed" means the same thing in the sim as against a real Argo CD: the
last operation Succeeded at SHA, the app is Synced at SHA, and Healthy as
assessed after that operation finished.

A real Argo CD keeps reconciling while the bot waits; the sim only moves when
stepped. So each check first lets the sim reconcile at the clock's current time
(``Sim.tick``): whoever moves the sim's ``FakeClock`` on between checks (the
caller that waits out a step's ``wait_s``) drives the whole sim forward exactly as
far as the wait took.
"""

from __future__ import annotations

from dataclasses import dataclass

from gitmedic.reconciler.sync.argo_rules import assess_application
from gitmedic.reconciler.sync.state import SyncState
from gitmedic.sim.runtime import Sim


@dataclass
class SimWatcher:
    sim: Sim

    def check(self, sha: str) -> SyncState:
        self.sim.tick()
        return assess_application(self.sim.engine.application(), sha, self.sim.clock.now())
