"""One app's controller: :class:`.loop.Loop` ticks (monitor, answer, advance every
transaction until it must wait) and returns; :mod:`.assemble` builds one from an
app's settings, for ``run`` and ``serve`` alike."""
