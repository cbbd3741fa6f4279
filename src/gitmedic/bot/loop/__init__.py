"""The bot's loop: monitor, respond, transact and remember for one app (see :mod:`.loop`)."""
