"""The ``gitmedic`` command line: :mod:`.main` parses and dispatches to one module per
command (``detect``, ``init``, ``run``, ``serve``, ``sim``, ``prs``, ``charts``,
``demo``); none of them is imported by the parts below."""
