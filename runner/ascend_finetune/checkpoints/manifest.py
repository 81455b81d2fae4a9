"""checkpoints.json without MindSpore: reading it, the best-checkpoint rule, paths inside a run, and the
lock that the training process and `delete-checkpoints` both take to rewrite it.

Without the lock, a train process saving a checkpoint (read entries, add one, write) and a delete
(read, drop some, write) could each write a manifest that lacks the other's change.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import math
import os
import stat
from collections.abc import Iterator
from typing import Any

from ..rundir import MANIFEST_MAX_BYTES, UnsafeFile, open_lock, read_json

MANIFEST = "checkpoints.json"
MANIFEST_LOCK = ".checkpoints.lock"


def sha256_file(path: str) -> str:
    """Streamed in 1 MiB blocks: checkpoints of large backbones are hundreds of MB. Regular files only
    (opened without blocking, then checked): a FIFO planted under a checkpoint's name must not hang
    `verify` or `inspect`. A symlink is followed: a user's pretrained file may be one."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(f"{os.path.basename(path)} is not a regular file", path, file=os.path.basename(path))
        os.set_blocking(fd, True)
        h = hashlib.sha256()
        for block in iter(lambda: os.read(fd, 1 << 20), b""):
            h.update(block)
        return h.hexdigest()
    finally:
        os.close(fd)


def manifest_path(run_dir: str) -> str:
    return os.path.join(run_dir, MANIFEST)


def read_manifest(run_dir: str) -> list[dict[str, Any]]:
    """The manifest's entries (dicts with a string `file`); a missing or unreadable manifest is empty."""
    entries = read_json(manifest_path(run_dir), [], MANIFEST_MAX_BYTES) or []
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("file"), str)]


@contextlib.contextmanager
def manifest_lock(run_dir: str) -> Iterator[None]:
    """Exclusive while checkpoints.json is read, changed and rewritten (blocks; held for milliseconds)."""
    fd = open_lock(os.path.join(run_dir, MANIFEST_LOCK))  # never a symlink, never a FIFO (UnsafeFile)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def _val_acc(e: dict[str, Any]) -> Any:
    """metrics.val_acc, or None when `metrics` is not an object (a hand-edited or foreign manifest)."""
    m = e.get("metrics")
    return m.get("val_acc") if isinstance(m, dict) else None


def _step(e: dict[str, Any]) -> float:
    s = e.get("step")
    return float(s) if isinstance(s, (int, float)) and _number(s) else 0.0


def _val_loss(e: dict[str, Any]) -> float:
    """metrics.val_loss, with a missing, null or non-finite one as the worst (+inf)."""
    m = e.get("metrics")
    v = m.get("val_loss") if isinstance(m, dict) else None
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.inf


def best_rank(val_acc: float, val_loss: float | None, step: float) -> tuple[float, float, float]:
    """The order `best` follows (the largest wins): the higher val_acc; on a tie the lower val_loss (a
    missing or non-finite one counts as the highest), then the later step. The verdict's `val_fell`
    names its best by it too."""
    loss = val_loss if val_loss is not None and math.isfinite(val_loss) else math.inf
    return (val_acc, -loss, step)


def mark_best(entries: list[dict[str, Any]], keep_best: bool) -> None:
    """At most one `best`: the highest numeric metrics.val_acc, by `best_rank`."""
    scored = [e for e in entries if _number(_val_acc(e))]
    best = (
        max(scored, key=lambda e: best_rank(_val_acc(e), _val_loss(e), _step(e)), default=None) if keep_best else None
    )
    for e in entries:
        e["best"] = e is best


def inside(run_dir: str, path: str) -> str | None:
    """`path` (absolute, or relative to the run directory) as a path relative to the run directory,
    after resolving symlinks; None when it resolves outside the run directory."""
    root = os.path.realpath(run_dir)
    real = os.path.realpath(path if os.path.isabs(path) else os.path.join(run_dir, path))
    if os.path.commonpath([root, real]) != root or real == root:
        return None
    return os.path.relpath(real, root)


def find_run_of(ckpt: str) -> str | None:
    """The run directory that lists this checkpoint in its manifest (`<run>/checkpoints/<file>`), if any."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(ckpt)))
    if not os.path.isfile(manifest_path(parent)):
        return None
    rel = inside(parent, os.path.abspath(ckpt))
    return parent if rel and any(os.path.normpath(e["file"]) == rel for e in read_manifest(parent)) else None


def entry_for(run_dir: str, ckpt: str) -> dict[str, Any] | None:
    rel = inside(run_dir, os.path.abspath(ckpt))
    return next((e for e in read_manifest(run_dir) if rel and os.path.normpath(e["file"]) == rel), None)
