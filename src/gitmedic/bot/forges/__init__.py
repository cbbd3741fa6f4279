"""Forge adapters: implementations of :class:`gitmedic.reconciler.forge.Forge`."""
