"""The weights cache as shared ground: its folders and the record beside each file (download.py writes
them, cache_status.py reads them).

The cache may sit in a team folder, so a folder below `$ASCEND_FINETUNE_CACHE/weights` is opened
through its parent's descriptor, following a symlinked folder only when this process's user or root
owns the link (a cache moved to a bigger disk), never another user's: on Linux the link's owner and
target are read through one O_PATH descriptor of the link itself; without O_PATH (macOS) the link is
checked before and after the open; on Windows, without getuid, no link is followed. Only regular files
are read or written, and none through a planted FIFO (O_NONBLOCK).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from ..checkpoints.errors import PretrainedError

CACHE_ENV = "ASCEND_FINETUNE_CACHE"
CHUNK = 1 << 20
RECORD_SUFFIX = ".sha256.json"
RECORD_MAX_BYTES = 4096
# O_NONBLOCK: a planted FIFO must not hang an open. getattr: Windows has none of them, and this module
# must still import there (fetch-weights and weights-status on the user's own machine).
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# Linux's descriptor of a symlink itself; without it (macOS) _open_trusted_link checks the link around the open.
_O_PATH: int = getattr(os, "O_PATH", 0)


def cache_root(env: Mapping[str, str] | None = None) -> str:
    e: Mapping[str, str] = os.environ if env is None else env
    root = e.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "ascend-finetune")
    return os.path.join(os.path.abspath(root), "weights")


class CacheUnsafe(PretrainedError):
    """A symlink (to a folder: another user's) or special file where the cache should hold a folder or a
    regular file, or a folder where it writes a file: someone else may have planted it in a shared
    cache, so it is neither followed nor written through (nor removed: it may hold their files)."""

    def __init__(self, path: str, cause: str):
        what = {"symlink": "a symlink", "not_folder": "not a folder"}.get(cause, "not a regular file")
        super().__init__(
            f"{path} in the weights cache is {what}: refusing to follow it (a symlinked folder is followed only "
            "when you or root own the link). Someone else may have planted it: check who owns it, remove it, "
            f"and try again. To keep the cache elsewhere, such as on a bigger disk, set {CACHE_ENV} to a folder "
            "there",
            "cache_unsafe",
            path=path,
            cause=cause,
        )


def trusted_owner(uid: int) -> bool:
    """Whether a symlink owned by `uid` may be followed: this process's user's or root's (theirs to point
    anywhere, as $ASCEND_FINETUNE_CACHE is). Never without getuid (Windows)."""
    getuid = getattr(os, "getuid", None)
    return getuid is not None and uid in (getuid(), 0)


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None


def _open_trusted_link(dir_fd: int, name: str, flags: int) -> int | None:
    """The folder the symlink `name` leads to, opened with `flags`, when trusted_owner owns the link;
    None otherwise. On Linux the link's owner and target are read through one O_PATH descriptor of the
    link itself, so it cannot be swapped between the check and the read. Without O_PATH (macOS) the
    link is checked with lstat, opened through, and checked again: still the same link (device, inode,
    owner), and where it leads now the very folder opened, so a swap in between is refused. Only
    someone able to rename your link (in a folder they may write to without the sticky bit) could
    time swaps around both checks."""
    if _O_PATH:
        try:
            link = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return None
        try:
            st = os.fstat(link)
            if not stat.S_ISLNK(st.st_mode) or not trusted_owner(st.st_uid):
                return None
            target = os.readlink("", dir_fd=link)
        finally:
            os.close(link)
        return os.open(target, flags, dir_fd=dir_fd)  # a relative target is relative to the link's folder
    before = _lstat(dir_fd, name)
    if before is None or not stat.S_ISLNK(before.st_mode) or not trusted_owner(before.st_uid):
        return None
    fd = os.open(name, flags, dir_fd=dir_fd)  # through the link
    try:
        after = _lstat(dir_fd, name)
        now, opened = os.stat(name, dir_fd=dir_fd), os.fstat(fd)
        same = (
            after is not None
            and stat.S_ISLNK(after.st_mode)
            and (after.st_dev, after.st_ino, after.st_uid) == (before.st_dev, before.st_ino, before.st_uid)
            and (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)
        )
    except OSError:
        same = False
    if same:
        return fd
    os.close(fd)
    return None


def open_subfolder(dir_fd: int, name: str) -> int:
    """A descriptor of the folder `name` in `dir_fd`, not following a symlink unless _open_trusted_link
    trusts it; OSError ELOOP or ENOTDIR (as O_NOFOLLOW gives) for another user's link, a link swapped
    while it was opened, or a non-folder."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        return os.open(name, flags | NOFOLLOW, dir_fd=dir_fd)
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        fd = _open_trusted_link(dir_fd, name, flags)
        if fd is None:
            raise
        return fd


def _cause(dir_fd: int, name: str, default: str) -> str:
    try:
        return "symlink" if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode) else default
    except OSError:
        return default


@dataclass
class Folder:
    """A cache folder opened without following another user's symlink (open_subfolder); its files are
    named relative to it, so a folder swapped for a symlink after the walk is not followed either."""

    fd: int
    path: str

    @classmethod
    def of(cls, dest: str, env: Mapping[str, str], create: bool) -> Folder | None:
        """The folder `dest` goes in, each step below $ASCEND_FINETUNE_CACHE (the user's choice, followed)
        opened with open_subfolder and, with `create`, made if missing; None when missing and not made."""
        root = os.path.dirname(cache_root(env))
        if create:
            os.makedirs(root, exist_ok=True)
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        path = root
        for name in os.path.relpath(os.path.dirname(dest), root).split(os.sep):
            path = os.path.join(path, name)
            try:
                try:
                    nxt = open_subfolder(fd, name)
                except FileNotFoundError:
                    if not create:
                        return None
                    try:
                        os.mkdir(name, 0o777, dir_fd=fd)  # never follows a symlink: EEXIST
                    except FileExistsError:
                        pass  # made by another process meanwhile, or a dangling symlink: the open decides
                    nxt = open_subfolder(fd, name)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise CacheUnsafe(path, _cause(fd, name, "not_folder")) from None
                raise
            finally:
                os.close(fd)
            fd = nxt
        return cls(fd, path)

    def close(self) -> None:
        os.close(self.fd)

    def open(self, name: str, flags: int) -> int:
        """A descriptor of the regular file `name` (FileNotFoundError passes through), else CacheUnsafe."""
        try:
            fd = os.open(name, flags | NOFOLLOW, 0o644, dir_fd=self.fd)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EWOULDBLOCK):
                raise CacheUnsafe(os.path.join(self.path, name), _cause(self.fd, name, "not_regular")) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise CacheUnsafe(os.path.join(self.path, name), "not_regular")
        return fd

    def size(self, name: str) -> int:
        """The size of a regular file `name`; 0 when missing or not a regular file (its open refuses it)."""
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return 0
        return st.st_size if stat.S_ISREG(st.st_mode) else 0

    def holds_folder(self, name: str) -> bool:
        """Whether `name` is a folder (not a symlink to one): no rename of a file can replace it."""
        st = _lstat(self.fd, name)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def replace(self, src: str, dst: str) -> None:
        """os.replace within the folder (a symlink at `dst` is replaced, not followed); a folder at `dst`,
        planted in a shared cache, is CacheUnsafe rather than the IsADirectoryError of the rename."""
        try:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except IsADirectoryError:
            raise CacheUnsafe(os.path.join(self.path, dst), "not_regular") from None

    def remove(self, name: str) -> None:
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def write(self, name: str, data: bytes) -> None:
        """`name` replaced by `data` at once: written to a new file (O_EXCL, under a name nobody can
        guess) and renamed over it (which replaces a symlink there, not its target; a folder there is
        CacheUnsafe)."""
        tmp = f"{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o644, dir_fd=self.fd)
        try:
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self.replace(tmp, name)
        except BaseException:
            self.remove(tmp)
            raise


def sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    while block := os.read(fd, CHUNK):
        h.update(block)
    return h.hexdigest()


def write_record(folder: Folder, name: str, sha256: str, st: os.stat_result) -> None:
    """`<name>.sha256.json` in `folder`: {sha256, bytes, mtime_ns} of the file as `st` saw it."""
    doc = {"sha256": sha256, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
    folder.write(name + RECORD_SUFFIX, json.dumps(doc).encode())


def read_small_json(path: str, dir_fd: int | None) -> object:
    """The JSON value of a regular file of at most 4 KB (a symlink is not followed), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > RECORD_MAX_BYTES:
            return None
        return json.loads(os.read(fd, RECORD_MAX_BYTES + 1))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def read_record(dest: str, dir_fd: int | None = None) -> dict[str, object] | None:
    """The record beside `dest`, or None: missing, not a regular file (a symlink is not followed),
    over 4 KB, or not the shape write_record writes. With dir_fd, `dest` is a name in that folder."""
    doc = read_small_json(dest + RECORD_SUFFIX, dir_fd)
    ok = (
        isinstance(doc, dict)
        and isinstance(doc.get("sha256"), str)
        and isinstance(doc.get("bytes"), int)
        and isinstance(doc.get("mtime_ns"), int)
    )
    return doc if ok else None  # type: ignore[return-value]
