"""``gitmedic serve`` assembled: the monitor thread ticking every app's controller, the
webhook service (:mod:`.webhook`) answering comment commands, and what keeps a
replica honest (the shared lock, health, metrics, shard Leases)."""
