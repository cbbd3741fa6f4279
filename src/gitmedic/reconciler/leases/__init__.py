"""Replicas divide apps with ``coordination.k8s.io/v1`` Leases (issue 26, item 3).

- :mod:`.record`: a Lease's spec as a frozen record, and its JSON both ways;
- :mod:`.api`: the four calls made of the API server (list, create, update, and
  the errors they end in), a protocol the tests fake;
- :mod:`.elector`: one Lease taken, renewed, taken over and released with
  client-go's leaderelection semantics;
- :mod:`.shards`: the coordinator: a heartbeat Lease per replica, a cap of
  ``ceil(apps / live replicas)`` app Leases each, a dead replica's apps taken over;
- :mod:`.app_lease`: an app's writer lease backed by its Kubernetes Lease;
- :mod:`.kube`: the API server's side, through the ``kubernetes`` client.
"""
