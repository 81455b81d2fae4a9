"""What a spec's paths are on this machine, for the editor's checks of a spec meant for another host:
missing, a file (its size) or a folder (its class folders, as the data scan counts them). Cheap: one
listing per folder, no image is opened and MindSpore is not imported."""

from __future__ import annotations

import os
from typing import Any

from .folder import class_folders

MAX_CLASSES = 1000


def probe_path(path: str, max_classes: int = MAX_CLASSES) -> dict[str, Any]:
    """`path` as the runner opens it (`~` expanded, relative to the working directory), described."""
    full = os.path.abspath(os.path.expanduser(path))
    out: dict[str, Any] = {"path": path, "resolved": full}
    if os.path.isdir(full):
        out["kind"] = "folder"
        try:
            names = class_folders(full)  # the data scan's own rule
        except OSError as e:
            names = []
            out["error"] = e.strerror or str(e)
        out["count"] = len(names)
        out["classes"] = names[:max_classes]
    elif os.path.isfile(full):
        out["kind"] = "file"
        try:
            out["bytes"] = os.path.getsize(full)
        except OSError:
            out["bytes"] = None
    elif os.path.lexists(full):
        out["kind"] = "other"  # a dangling link, a socket, a device
    else:
        out["kind"] = "missing"
    return out


def probe(paths: list[str], max_classes: int = MAX_CLASSES) -> dict[str, Any]:
    return {"paths": [probe_path(p, max_classes) for p in paths]}
