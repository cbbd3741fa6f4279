"""The apps a repository holds: what ``init`` finds (:mod:`.apps`) and what ``run`` and
``serve`` act on without a ``.gitmedic/config.yaml`` (:mod:`.adopted`)."""
