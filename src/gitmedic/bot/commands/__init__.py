"""Comment commands (``/gitmedic approve`` ...): parsed (:mod:`.parse`), permitted and
answered (:mod:`.dispatch`) onto the actions interface (:mod:`.actions`)."""
