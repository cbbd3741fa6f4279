"""Every kind of transaction, one module each, all stepped by the loop's one runner.

- :mod:`~gitmedic.bot.transactions.fix`: a fix's merge a person asked for
  (``/gitmedic merge``), an intent the next tick carries out; the fix's plan is
  made by the loop (:mod:`gitmedic.bot.controller.transact`), from the incident;
- :mod:`~gitmedic.bot.transactions.retry`: a person's retry of an incident, queued
  and run by the next tick as a new attempt;
- :mod:`~gitmedic.bot.transactions.revert`: a revert a person asked for on a
  merged PR, planned when asked, its PR opened by the next tick;
- :mod:`~gitmedic.bot.transactions.watch`: a person's merge, watched from ``merged``
  through the sync wait and the journaled window; a regression gets a revert PR
  offered, never merged without a person;
- :mod:`~gitmedic.bot.transactions.memory`: the memory PR after a fix.

What people ask for is recorded first (:mod:`~gitmedic.bot.transactions.intents`,
rows of the journal keyed by app, or the plan itself in the journal) by whichever
replica the comment reached, and acted on by the next tick of the one holding the
app's writer lease (:mod:`~gitmedic.bot.transactions.asked`: one read of them per
tick); a comment is answered at once and never waits.
"""
