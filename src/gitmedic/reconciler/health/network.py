"""Health of objects that expose or register endpoints: Service, Ingress, APIService."""

from __future__ import annotations

from gitmedic.reconciler.health import fields as f
from gitmedic.reconciler.health.fields import JSON
from gitmedic.reconciler.health.status import Health, HealthStatus


def service_health(obj: JSON) -> Health:
    """A LoadBalancer Service is Progressing until it has an address; others are Healthy."""
    if f.string(obj, "spec", "type") != "LoadBalancer":
        return Health(HealthStatus.HEALTHY)
    if f.items(obj, "status", "loadBalancer", "ingress"):
        return Health(HealthStatus.HEALTHY)
    return Health(HealthStatus.PROGRESSING)


def ingress_health(obj: JSON) -> Health:
    """Progressing until the controller has published an address."""
    ingresses = f.mapping(obj, "status", "loadBalancer").get("ingress")
    if isinstance(ingresses, list) and ingresses:
        return Health(HealthStatus.HEALTHY)
    return Health(HealthStatus.PROGRESSING)


def apiservice_health(obj: JSON) -> Health:
    available = f.condition(obj, "Available")
    if available is None:
        return Health(HealthStatus.PROGRESSING, "Waiting to be processed")
    message = f"{f.string(available, 'reason')}: {f.string(available, 'message')}"
    if available.get("status") == "True":
        return Health(HealthStatus.HEALTHY, message)
    return Health(HealthStatus.PROGRESSING, message)
