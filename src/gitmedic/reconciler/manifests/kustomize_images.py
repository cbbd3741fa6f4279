"""Where a kustomization's ``images:`` transformer sets a container's image.

``images: [{name: ghcr.io/x/app, newTag: 6.1.0}]`` rewrites every container whose
image is ``ghcr.io/x/app[:tag]`` (``newName`` renames it, ``digest`` pins it). A
release bumps that entry, not the Deployment (Flux image automation writes it
too), so a bad tag is restored there: the entry whose ``name`` is the image the
resource file declares, addressed in the kustomization file as a list item by
its ``name``.
"""

from __future__ import annotations

from typing import Any

import yaml

from gitmedic.reconciler.manifests.paths import Match, Path

__all__ = ["image_entry", "repository"]


def repository(image: str) -> str:
    """``registry/name`` of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    head, colon, tag = name.rpartition(":")
    return head if colon and "/" not in tag else name


def image_entry(kustomization: str, declared_image: str) -> Path | None:
    """The path of the ``images`` entry that rewrites ``declared_image``, or None."""
    try:
        data = yaml.safe_load(kustomization)
    except yaml.YAMLError:
        return None
    entries: Any = data.get("images") if isinstance(data, dict) else None
    wanted = repository(declared_image)
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("name") or "") == wanted:
            return ("images", Match("name", wanted))
    return None
