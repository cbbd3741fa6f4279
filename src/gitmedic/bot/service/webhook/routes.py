"""Which repository's forge and actions a delivery is for: its ``repository.full_name``.

``serve`` without ``--repos`` serves one repository and acts on every delivery as
before (:meth:`Routes.one`). With ``--repos`` (:mod:`gitmedic.bot.service.repos`) a
delivery goes to the repository its payload names, compared as GitHub compares
names (case-insensitively); one for a repository not served here is acknowledged
and never acted on (:meth:`Routes.refusal`): acting on another repository would
answer a command with the wrong repository's permissions and transactions. The
events GitHub sends without a repository (an organization's ``ping``, an App's
``installation``) act on nothing, so the first repository's handlers log them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gitmedic.bot.service.webhook.handlers import Deps, Payload

# events that may come without a repository and only log: any repository may answer
WITHOUT_REPOSITORY = frozenset({"ping", "installation"})


@dataclass(frozen=True)
class Routes:
    first: Deps
    by_name: Mapping[str, Deps] = field(default_factory=dict)  # casefolded full_name -> deps
    routed: bool = False  # False: serve's one repository, whatever a payload names

    @classmethod
    def one(cls, deps: Deps) -> Routes:
        return cls(deps)

    @classmethod
    def of(cls, named: Sequence[tuple[str, Deps]]) -> Routes:
        by_name = {name.casefold(): deps for name, deps in named}
        if len(by_name) != len(named):
            raise ValueError("two repositories with one name")
        return cls(named[0][1], by_name, routed=True)

    def pick(self, event: str, payload: Payload) -> Deps | None:
        """The repository's deps; None when the payload names one not served here."""
        if not self.routed:
            return self.first
        name = repository(payload)
        if name is None:
            return self.first if event in WITHOUT_REPOSITORY else None
        return self.by_name.get(name.casefold())

    def refusal(self, event: str, payload: Payload) -> str | None:
        """Why the delivery is not for this service, or None when it is."""
        if self.pick(event, payload) is not None:
            return None
        name = repository(payload)
        if name is None:
            return f"{event} without a repository: not served here"
        return f"repository {name} is not served here"


def repository(payload: Payload) -> str | None:
    repo = payload.get("repository")
    name = repo.get("full_name") if isinstance(repo, Mapping) else None
    return name if isinstance(name, str) and name else None
