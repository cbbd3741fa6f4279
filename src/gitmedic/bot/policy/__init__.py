"""The team's policy: which fixes may merge without a person (:mod:`.decide`), from
rules matched on a change's files and fields (:mod:`.match`)."""
