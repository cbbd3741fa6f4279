"""A generated namespace of 10,000 objects, as one multi-document YAML file.

The proportions follow what ``kubectl get all,cm,events -o yaml`` returns for a
busy namespace: Events dominate, every Deployment has its Service and
ConfigMap, and each Deployment runs a few Pods owned through a ReplicaSet
name. Objects are wired the way real apps are (Services select their
Deployment's pod labels and target a declared port, Deployments read their
ConfigMap through ``envFrom`` and call other Services through env addresses,
Events name Pods), so detectors do the work they do on a real app rather than
returning early. Like most manifests, objects name no namespace (detect runs
with ``--namespace bench``). A seeded ``random.Random`` makes the file
byte-identical on every run (about 2.8 MB for 10,000 objects).

    python bench/gen_namespace.py OUT.yaml [--objects N] [--seed S]
"""

from __future__ import annotations

import argparse
import itertools
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

NAMESPACE = "bench"
# Per application: 1 Deployment, 1 Service, 1 ConfigMap, PODS_PER_APP Pods and
# EVENTS_PER_APP Events; the last application is cut short to hit the exact count.
PODS_PER_APP = 3
EVENTS_PER_APP = 10
OBJECTS_PER_APP = 3 + PODS_PER_APP + EVENTS_PER_APP
EVENT_REASONS = (
    ("Scheduled", "Assigned {pod} to node-{node}"),
    ("Pulling", "Pulling image {app}:{tag}"),
    ("Pulled", "Pulled image {app}:{tag}"),
    ("Created", "Created container {app}"),
    ("Started", "Started container {app}"),
)


def deployment(app: str, port: int, calls: list[tuple[str, int]], rng: random.Random) -> str:
    env = "".join(
        f"""        - name: {dep.upper().replace("-", "_")}_ADDR
          value: "{dep}:{dep_port}"
"""
        for dep, dep_port in calls
    )
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  labels:
    app: {app}
spec:
  replicas: {PODS_PER_APP}
  selector:
    matchLabels:
      app: {app}
  template:
    metadata:
      labels:
        app: {app}
    spec:
      containers:
      - name: {app}
        image: registry.example.com/{app}:v1.{rng.randint(0, 40)}.0
        ports:
        - name: http
          containerPort: {port}
        envFrom:
        - configMapRef:
            name: {app}-config
        env:
{env}        readinessProbe:
          httpGet:
            path: /healthz
            port: {port}
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
"""


def service(app: str, port: int) -> str:
    return f"""apiVersion: v1
kind: Service
metadata:
  name: {app}
spec:
  selector:
    app: {app}
  ports:
  - name: http
    port: {port}
    targetPort: {port}
"""


def config_map(app: str, rng: random.Random) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {app}-config
data:
  LOG_LEVEL: {rng.choice(("debug", "info", "warn"))}
  CACHE_TTL_SECONDS: "{rng.randint(10, 600)}"
"""


def pod(app: str, pod_name: str, port: int, node: int) -> str:
    owner = pod_name.rsplit("-", 1)[0]
    # A real owner reference carries its owner's uid (the API server requires one): a
    # pod without it is invalid and the schema detector would report every pod.
    uid = uuid.uuid5(uuid.NAMESPACE_URL, f"replicaset/{owner}")
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {pod_name}
  labels:
    app: {app}
  ownerReferences:
  - apiVersion: apps/v1
    kind: ReplicaSet
    name: {owner}
    uid: {uid}
    controller: true
spec:
  nodeName: node-{node}
  containers:
  - name: {app}
    image: registry.example.com/{app}:v1.0.0
    ports:
    - containerPort: {port}
"""


def event(app: str, pod_name: str, index: int, node: int) -> str:
    reason, template = EVENT_REASONS[index % len(EVENT_REASONS)]
    message = template.format(ns=NAMESPACE, pod=pod_name, node=node, app=app, tag="v1.0.0")
    return f"""apiVersion: v1
kind: Event
metadata:
  name: {pod_name}.{index:04x}
involvedObject:
  kind: Pod
  name: {pod_name}
reason: {reason}
message: {message}
lastTimestamp: "2025-01-01T00:{index // 60:02d}:{index % 60:02d}Z"
"""


def documents(objects: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    apps = [f"svc-{i:04d}" for i in range(-(-objects // OBJECTS_PER_APP))]
    ports = {app: rng.choice((8080, 9090, 3000, 5000, 7070)) for app in apps}
    for i, app in enumerate(apps):
        callees = rng.sample(apps[:i], k=min(i, rng.randint(0, 3)))
        yield deployment(app, ports[app], [(c, ports[c]) for c in callees], rng)
        yield service(app, ports[app])
        yield config_map(app, rng)
        replica_set = f"{app}-{rng.getrandbits(32):08x}"
        pods = [f"{replica_set}-{rng.getrandbits(20):05x}" for _ in range(PODS_PER_APP)]
        nodes = [rng.randint(1, 12) for _ in pods]
        for name, node in zip(pods, nodes, strict=True):
            yield pod(app, name, ports[app], node)
        for e in range(EVENTS_PER_APP):
            yield event(app, pods[e % len(pods)], e, nodes[e % len(pods)])


def generate(out: Path, objects: int = 10_000, seed: int = 7) -> Path:
    out.write_text("---\n".join(itertools.islice(documents(objects, seed), objects)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.out, args.objects, args.seed)


if __name__ == "__main__":
    main()
