"""`weights-status`: which named weight sources are already in this machine's weights cache, without
any request and without MindSpore, for the editor's "cached on <target>" / "downloads on <target>".

The cache may sit on shared ground (`ASCEND_FINETUNE_CACHE` on a team folder), so it is read the way
a download writes it: every folder below the cache root is opened through its parent's `dir_fd`,
following a symlinked folder only when this user or root owns the link (cache_folder.open_subfolder, the
download's own rule, which off Linux also refuses a link swapped while it was opened and on Windows
follows none), only a regular file counts, and the only bytes read are
the small record download.py writes beside each download (`<file>.sha256.json`, at most 4 KB). A
file is hashed only when a hash is expected (the catalog's or a `#sha256=` pin) and no current record
holds it. Nothing here opens a connection: whether the box can reach the URL is not probed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Mapping

from .cache_folder import CHUNK, cache_root, open_subfolder, read_record, trusted_owner
from .catalog import HF_HUB, MINDCV, Source, parse, resolve_url


def catalog_sources() -> list[str]:
    """The sources the editor offers: the catalog's `mindcv:` names with a backbone, then its timm
    hub repositories."""
    return [f"mindcv:{n}" for n, e in MINDCV.items() if e.backbone] + [f"hf-hub:{r}" for r in HF_HUB]


class _Unsafe(Exception):
    pass


def _why_not_a_folder(dir_fd: int, name: str) -> str:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return "not a folder"
    if not stat.S_ISLNK(st.st_mode):
        return "not a folder"
    if trusted_owner(st.st_uid):  # yours, but it changed while it was opened (open_subfolder)
        return "a symlink that changed while it was read: not followed"
    return "a symlink neither you nor root own: not followed"


def _open_folder(root: str, parts: list[str]) -> int | None:
    """A descriptor of root/parts..., each step opened as a download opens it (open_subfolder); None if
    a folder is missing. The cache root itself is the user's choice and is followed."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    for name in parts:
        try:
            nxt = open_subfolder(fd, name)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError as e:
            why = _why_not_a_folder(fd, name) if e.errno in (errno.ELOOP, errno.ENOTDIR) else None
            os.close(fd)
            if why:
                raise _Unsafe(f"{name} in the cache is {why}") from None
            raise
        os.close(fd)
        fd = nxt
    return fd


def _sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    while block := os.read(fd, CHUNK):
        h.update(block)
    return h.hexdigest()


def _regular(name: str, dir_fd: int) -> tuple[int, os.stat_result] | None:
    """An open descriptor and stat of a regular file `name`; None if missing; _Unsafe otherwise."""
    try:  # O_NONBLOCK: a FIFO planted under the name must not hang the listing
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _Unsafe("a symbolic link, not followed: the run downloads over it") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _Unsafe("not a regular file")
    return fd, st


def source_status(src: Source, env: Mapping[str, str]) -> dict[str, object]:
    root = os.path.dirname(cache_root(env))  # $ASCEND_FINETUNE_CACHE
    rel = ["weights", *src.cache_relpath().split(os.sep)]
    path = os.path.join(root, *rel)
    out: dict[str, object] = {
        "source": src.text,
        "path": path,
        "url": resolve_url(src, env),
        "state": "missing",
        "bytes": None,
        "part_bytes": 0,
        "sha256": None,
        "expected_sha256": src.sha256,
        "sha256_ok": None,
    }
    try:
        dfd = _open_folder(root, rel[:-1])
    except _Unsafe as e:
        return {**out, "state": "unsafe", "why": str(e)}
    except OSError as e:
        return {**out, "state": "unreadable", "why": f"{type(e).__name__}: {e.strerror}"}
    if dfd is None:
        return out
    name = rel[-1]
    try:
        try:
            part = _regular(name + ".part", dfd)
            if part:
                os.close(part[0])
                out["part_bytes"] = part[1].st_size
        except _Unsafe:
            pass  # the run's download opens .part with O_NOFOLLOW and fails on it; nothing to resume
        try:
            got = _regular(name, dfd)
        except _Unsafe as e:
            return {**out, "state": "unsafe", "why": str(e)}
        if got is None:
            return out
        fd, st = got
        try:
            out.update(state="cached", bytes=st.st_size)
            rec = read_record(name, dir_fd=dfd)
            if rec is not None and rec["bytes"] != st.st_size:
                return {
                    **out,
                    "state": "damaged",
                    "why": f"{st.st_size} bytes, but {rec['bytes']} were downloaded (truncated or replaced)",
                }
            current = rec is not None and rec["mtime_ns"] == st.st_mtime_ns
            if current and rec is not None:
                out["sha256"] = rec["sha256"]
            elif src.sha256:
                out["sha256"] = _sha256_fd(fd)
            if src.sha256 and out["sha256"]:
                out["sha256_ok"] = out["sha256"] == src.sha256
                if not out["sha256_ok"]:
                    return {**out, "state": "damaged", "why": f"sha256 {out['sha256']}, expected {src.sha256}"}
            return out
        finally:
            os.close(fd)
    finally:
        os.close(dfd)


def status(values: list[str], env: Mapping[str, str] | None = None) -> dict[str, object]:
    """The cache state of each source (the catalog's when none is given); SourceError for a bad name."""
    e: Mapping[str, str] = os.environ if env is None else env
    srcs = [parse(v) for v in (values or catalog_sources())]
    return {"cache": cache_root(e), "sources": [source_status(s, e) for s in srcs]}
