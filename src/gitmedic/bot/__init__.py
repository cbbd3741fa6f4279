"""The bot, as folders read from the top down (docs/architecture.md draws the flow):

- :mod:`.cli`: the ``gitmedic`` commands, each a front over the parts below;
- :mod:`.service`: ``gitmedic serve``: the monitor thread, the webhook service
  (:mod:`.service.webhook`), shards, health and metrics;
- :mod:`.controller`: one app's controller: a tick (:class:`.controller.loop.Loop`)
  that monitors, answers incidents and advances transactions, never waiting;
- :mod:`.commands`: comment commands parsed, permitted and dispatched onto actions;
- :mod:`.responder` and :mod:`.memory`: what to propose for an incident (playbooks,
  bisect, the LLM) and what was learned (playbooks, CEL rules, outcomes);
- :mod:`.render`, :mod:`.policy`, :mod:`.discover`: PR bodies, reports and the
  dashboard; the team's merge policy; the apps a repository holds;
- :mod:`.forges` and :mod:`.common`: the forges (local, GitHub) and what every layer
  may use (exit codes, optional extras, SQLite files).
"""
