"""ImageFolder data: scan (with broken files skipped and counted) and stratified split; the MindSpore
pipeline over the scanned files is in pipeline.py. Standard library only (`probe` imports this).

Every image is decoded once by Pillow during the scan, because MindSpore's C++ Decode kills the whole
process (SIGFPE) on a truncated JPEG instead of raising; the pipeline itself then decodes in C++.
The verdicts are cached per file (size and mtime), so a data set is verified once, not every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..rundir import create_temp, read_bytes, replace_file

IMAGE_EXTENSIONS = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


class DataError(Exception):
    """Bad data that stops a run; `path` is the spec field to fix, `why` the error's code and `params`
    the values its message and fix name (docs/protocol.md, "Errors")."""

    def __init__(self, path: str, message: str, fix: str, why: str = "bad_data", **params: Any):
        super().__init__(message)
        self.path, self.message, self.fix = path, message, fix
        self.why, self.params = why, params


@dataclass
class ImageSet:
    classes: list[str]
    samples: list[tuple[str, int]]
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def _check_image(path: str) -> str | None:
    """None if Pillow can fully decode the file, else the reason."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            im.draft("RGB", (64, 64))  # JPEG: decode at reduced scale, still reads every byte
            im.load()
        return None
    except Exception as e:  # Pillow raises many types for bad files
        return f"{type(e).__name__}: {e}"


# About 100 bytes per image (its path, size, mtime and verdict): room for a few million images. A larger
# file is not read (the set is then decoded as without a cache), so no planted file can exhaust memory.
SCAN_CACHE_MAX_BYTES = 256 << 20


def scan_cache_path(root: str) -> str:
    """Where the verdicts for one data root are kept between runs ($ASCEND_FINETUNE_CACHE or ~/.cache)."""
    base = os.environ.get("ASCEND_FINETUNE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ascend-finetune")
    digest = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(base, "scan", f"{digest}.json")


class _ScanCache:
    """Per-file verdicts keyed by (size, mtime_ns): decoding every image of a large set takes long
    (about 1.6 ms per 500x375 JPEG per core here, half an hour for ImageNet on 2 cores), so later
    runs over the same files decode only what changed. A cache that cannot be read or written is
    ignored: it only saves time. The cache folder may be shared with other users, so it is read and
    written by rundir's rules: no symlink followed, no FIFO opened to hang on, a capped read, and a
    temporary file created exclusively under a name nobody can guess."""

    def __init__(self, root: str):
        self.path = scan_cache_path(root)
        try:
            entries = json.loads(read_bytes(self.path, SCAN_CACHE_MAX_BYTES))
        except (OSError, ValueError, RecursionError):  # missing, unsafe (UnsafeFile), too large, not JSON
            entries = None
        self.entries: dict[str, Any] = entries if isinstance(entries, dict) else {}
        self.fresh: dict[str, list] = {}

    def check(self, path: str) -> str | None:
        try:
            st = os.stat(path)
        except OSError as e:
            return f"{type(e).__name__}: {e}"
        if not stat.S_ISREG(st.st_mode):  # a FIFO named x.jpg would hang the decoder's open for good
            return "not a regular file (a FIFO, device or folder named like an image)"
        key = [st.st_size, st.st_mtime_ns]
        hit = self.entries.get(path)
        if isinstance(hit, list) and len(hit) == 3 and hit[:2] == key and (hit[2] is None or isinstance(hit[2], str)):
            reason = hit[2]
        else:  # a miss, a changed file, or an entry of another shape (the file is anyone's to edit)
            reason = _check_image(path)
        self.fresh[path] = key + [reason]
        return reason

    def save(self) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd, tmp = create_temp(self.path)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.fresh, f)
            replace_file(tmp, self.path)  # UnsafeFile (an OSError) when a folder sits at the path
        except OSError:
            try:
                os.unlink(tmp)  # not left behind in a shared folder
            except OSError:
                pass


def class_folders(root: str) -> list[str]:
    """The classes of an ImageFolder root: its sub-folders, sorted, dot-folders left out (OSError if unreadable)."""
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))


def list_classes(root: str, field_path: str = "data.train") -> list[str]:
    if not os.path.isdir(root):
        raise DataError(
            field_path,
            f"folder not found: {root}",
            f"point {field_path} at an existing ImageFolder root",
            "folder_not_found",
            field=field_path,
            folder=root,
        )
    return class_folders(root)


def scan(root: str, workers: int, field_path: str = "data.train", classes: list[str] | None = None) -> ImageSet:
    """Files per class folder, with image extensions in any case; undecodable ones are skipped."""
    found = list_classes(root, field_path)
    if classes is None:
        classes = found
        if len(classes) < 2:
            raise DataError(
                field_path,
                f"found {len(classes)} class folder(s) in {root}; a classifier needs at least 2",
                "put one sub-folder per class (each with images) under the data root",
                "too_few_classes",
                count=len(classes),
                folder=root,
            )
    else:
        missing, extra = sorted(set(classes) - set(found)), sorted(set(found) - set(classes))
        if missing or extra:
            raise DataError(
                field_path,
                f"classes differ from data.train: missing {missing}, extra {extra}",
                "use the same class folder names for training and validation",
                "classes_differ",
                missing=missing,
                extra=extra,
            )
    candidates: list[tuple[str, int]] = []
    skipped: list[tuple[str, str]] = []
    for label, cls in enumerate(classes):
        cdir = os.path.join(root, cls)
        for dirpath, _, files in sorted(os.walk(cdir, followlinks=True)):
            for name in sorted(files):
                p = os.path.join(dirpath, name)
                if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS:
                    candidates.append((p, label))
                elif not name.startswith("."):
                    skipped.append((p, "not an image file (extension)"))
    cache = _ScanCache(root)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        reasons = list(pool.map(lambda s: cache.check(s[0]), candidates))
    cache.save()
    samples = [s for s, r in zip(candidates, reasons) if r is None]
    skipped += [(s[0], r) for s, r in zip(candidates, reasons) if r is not None]
    # A set, not numpy's bincount: the scan stays free of numpy so that `probe` starts fast.
    used = {label for _, label in samples}
    empty = [c for i, c in enumerate(classes) if i not in used]
    if empty:
        raise DataError(
            field_path,
            f"class folder(s) with no readable images: {', '.join(empty)}",
            "add images to those folders or remove them",
            "empty_classes",
            classes=empty,
        )
    return ImageSet(classes, samples, skipped)


def held_out(n: int, fraction: float) -> int:
    """How many of a class's `n` images the split holds out for validation (round(n * fraction), but
    at least one and not all, Python's rounding: half to even); the verdict's fix counts with it too."""
    return min(max(1, round(n * fraction)), n - 1) if n > 1 and fraction > 0 else 0


def stratified_split(samples: list[tuple[str, int]], fraction: float, seed: int) -> tuple[list, list]:
    """Seeded per-class split; each class with 2+ images keeps at least one in each part (held_out)."""
    if fraction <= 0:
        return list(samples), []
    rng = random.Random(seed)
    by_class: dict[int, list] = {}
    for s in samples:
        by_class.setdefault(s[1], []).append(s)
    train, val = [], []
    for label in sorted(by_class):
        items = by_class[label][:]
        rng.shuffle(items)
        n_val = held_out(len(items), fraction)
        val += items[:n_val]
        train += items[n_val:]
    return train, val
