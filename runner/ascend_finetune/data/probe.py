"""What a spec's paths are on this machine, for the editor's checks of a spec meant for another host
and the Start wizard's data and weights steps: missing, a file (its size; for a checkpoint inside a
run directory, the backbone and image size its run trained with) or a folder (its class folders as
the data scan counts them, its images, and their typical size). Cheap: one listing per folder, the
first bytes of a few images (no image is decoded) and MindSpore and NumPy are not imported."""

from __future__ import annotations

import os
import stat
import struct
from typing import Any

from ..rundir import read_json
from .folder import IMAGE_EXTENSIONS, class_folders

MAX_CLASSES = 1000
# Images whose header is read per folder: the typical size is their median shorter side.
SIZE_SAMPLE = 24
HEADER_BYTES = 64 * 1024
# Files looked at per class folder when counting images: a huge folder costs a bounded listing.
MAX_FILES_PER_CLASS = 1_000_000
CHECKPOINT_EXTENSIONS = (".ckpt", ".safetensors")


def _read_header(path: str) -> bytes | None:
    """The first bytes of a regular file (a FIFO named *.jpg is not waited on), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, HEADER_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def header_size(b: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, BMP or JPEG header, or None (the editor's imageFolders.ts rule)."""
    if len(b) >= 24 and b[:4] == b"\x89PNG":
        w, h = struct.unpack(">II", b[16:24])
        return w, h
    if len(b) >= 10 and b[:3] == b"GIF":
        w, h = struct.unpack("<HH", b[6:10])
        return w, h
    if len(b) >= 26 and b[:2] == b"BM":
        w, h = struct.unpack("<ii", b[18:26])
        return w, abs(h)
    if len(b) >= 4 and b[0] == 0xFF and b[1] == 0xD8:
        i = 2
        while i + 9 < len(b):
            if b[i] != 0xFF:
                return None
            marker = b[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            (length,) = struct.unpack(">H", b[i + 2 : i + 4])
            # SOF0-15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", b[i + 5 : i + 9])
                return w, h
            i += 2 + length
    return None


def _images_in(folder: str) -> tuple[int, list[str]]:
    """Image files directly in a class folder (the data scan's extensions, any case): count and names."""
    names: list[str] = []
    try:
        with os.scandir(folder) as it:
            for n, e in enumerate(it):
                if n >= MAX_FILES_PER_CLASS:
                    break
                if os.path.splitext(e.name)[1].lower() in IMAGE_EXTENSIONS and not e.is_dir():
                    names.append(e.name)
    except OSError:
        return 0, []
    return len(names), sorted(names)


def describe_images(root: str, classes: list[str], sample: int = SIZE_SAMPLE) -> dict[str, Any]:
    """`images` (all class folders) and `typical_size` (median shorter side of a sample, px, or None)."""
    total = 0
    files: list[str] = []
    per_class = -(-sample // max(1, len(classes)))
    for c in classes:
        n, names = _images_in(os.path.join(root, c))
        total += n
        files.extend(os.path.join(root, c, f) for f in names[:per_class])
    sides = sorted(
        min(s) for s in (header_size(h) for h in map(_read_header, files[:sample]) if h is not None) if s is not None
    )
    return {"images": total, "typical_size": sides[len(sides) // 2] if sides else None}


def _checkpoint_run(full: str) -> dict[str, Any] | None:
    """For `<run>/checkpoints/<file>.ckpt`: the backbone and image size in the run's spec.json."""
    folder = os.path.dirname(full)
    if not full.endswith(CHECKPOINT_EXTENSIONS) or os.path.basename(folder) != "checkpoints":
        return None
    spec = read_json(os.path.join(os.path.dirname(folder), "spec.json"))  # bounded, no symlink followed
    if not isinstance(spec, dict):
        return None
    model, data = spec.get("model"), spec.get("data")
    backbone = model.get("backbone") if isinstance(model, dict) else None
    size = data.get("image_size") if isinstance(data, dict) else None
    if not isinstance(backbone, str):
        return None
    return {"backbone": backbone, "image_size": size if isinstance(size, int) and not isinstance(size, bool) else None}


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
        out.update(describe_images(full, names))
    elif os.path.isfile(full):
        out["kind"] = "file"
        try:
            out["bytes"] = os.path.getsize(full)
        except OSError:
            out["bytes"] = None
        run = _checkpoint_run(full)
        if run:
            out["run"] = run
    elif os.path.lexists(full):
        out["kind"] = "other"  # a dangling link, a socket, a device
    else:
        out["kind"] = "missing"
    return out


def probe(paths: list[str], max_classes: int = MAX_CLASSES) -> dict[str, Any]:
    return {"paths": [probe_path(p, max_classes) for p in paths]}
