"""One open descriptor of a weights file, and a path every reader of the run reads it through.

A run reads `model.pretrained` several times: its origin, the preprocessing and lineage a runner
checkpoint records in itself, the load, the sha256 it records. Read by name, each could meet another
file: someone who can write the file's folder renames other weights into its place between two
reads, and renames the first file back after the load, so the run trains on weights it did not
hash. Pinned, every reader gets `read_path`: a symlink in a private temporary folder, under the
file's own name (readers pick the format by its suffix), to `/proc/self/fd/N`. Opening it opens the
descriptor's file, wherever it has been renamed since; nothing renamed into the original name is
read. Every reader here opens the path (MindSpore's own loader, which resolves names with realpath,
is not used for pretrained weights: checkpoints/format.py reads them). The run folder's own
manifest (checkpoints.json beside a runner checkpoint) is another file, read by name.

Without a link (no /proc: not Linux; a TMPDIR that is full, or that another user could change; a
sandbox that refuses to open /proc/self/fd) `read_path` is the file's own name, and the identity
check after the load (train/weights_setup.py check_unchanged) compares the name's identity instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
import weakref
from collections.abc import Iterator
from typing import Any

from ..checkpoints.errors import PretrainedError, ToolError
from ..rundir import pid_alive
from .download import identity_of

PROC_FD = "/proc/self/fd"
PREFIX = "ascend-weights-"
# A folder left by a process that died without cleaning up (SIGKILL, the OOM killer) is removed once
# it is this old and its pid is gone: the age keeps a live run's folder safe where another pid
# namespace (a container) shares the temporary folder and its pid cannot be seen from here.
STALE_S = 24 * 3600


class PinnedFile:
    """`path` open once; `read_path` reads that open file. PretrainedError for a path that is not a
    regular file (a FIFO is not waited on); FileNotFoundError passes through."""

    def __init__(self, path: str):
        self.path = path
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PretrainedError(f"{path} is not a regular file", "pretrained_not_found", path=path)
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        self.fd: int | None = fd
        self.identity = identity_of(st)
        self._dir: str | None = None
        self.read_path = path
        try:
            self._link(fd, st)
        finally:
            # Closed on close(), else when the pin is dropped or Python exits (a run that failed first).
            self._cleanup = weakref.finalize(self, _release, fd, self._dir)

    def _link(self, fd: int, st: os.stat_result) -> None:
        """The private link to the descriptor, once it is seen to open the same file; else (no /proc, a
        TMPDIR that is full or that others could change, a sandbox that refuses /proc/self/fd) none:
        the name is read, and check_unchanged compares the name's identity instead."""
        try:  # gettempdir raises FileNotFoundError when no temporary folder is usable (a full disk)
            if not (os.path.isdir(PROC_FD) and _private_parent(tempfile.gettempdir())):
                return
            _remove_stale(tempfile.gettempdir())
            # 0700: no one else can change the link. The pid lets a later run remove it after a SIGKILL.
            folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
        except OSError:
            return
        link = os.path.join(folder, os.path.basename(self.path))
        try:
            os.symlink(f"{PROC_FD}/{fd}", link)
            probe = os.open(link, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                seen = os.fstat(probe)
            finally:
                os.close(probe)
            same = (seen.st_dev, seen.st_ino) == (st.st_dev, st.st_ino)
        except OSError:
            same = False
        if same:
            self._dir, self.read_path = folder, link
        else:
            shutil.rmtree(folder, ignore_errors=True)

    @property
    def pinned(self) -> bool:
        """Whether readers read the open file (not the name)."""
        return self._dir is not None

    def identity_now(self) -> tuple[int, int, int, int] | None:
        """The open file's identity now (an in-place rewrite changes its size or mtime); without a pin,
        the name's (None when it is gone)."""
        try:
            st = os.fstat(self.fd) if self.pinned and self.fd is not None else os.stat(self.path)
        except OSError:
            return None
        return identity_of(st)

    @contextlib.contextmanager
    def named(self) -> Iterator[None]:
        """Errors raised by a reader of `read_path` name the file as the user gave it, not the link."""
        try:
            yield
        except OSError as e:
            if e.filename == self.read_path:
                e.filename = self.path
            raise
        except (PretrainedError, ToolError) as e:
            if self.read_path != self.path:
                e.args = tuple(self._unlink(a) for a in e.args)
                e.params = {k: self._unlink(v) for k, v in e.params.items()}
                if isinstance(e, ToolError):
                    e.extra = {k: self._unlink(v) for k, v in e.extra.items()}
            raise

    def _unlink(self, v: Any) -> Any:
        return v.replace(self.read_path, self.path) if isinstance(v, str) else v

    def close(self) -> None:
        self._cleanup()
        self._dir = self.fd = None


def _private_parent(folder: str) -> bool:
    """Whether a folder made in `folder` stays this process's: no one else can rename it away and put
    theirs in its place (a sticky folder, as /tmp is, or one only this user can write)."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    return bool(st.st_mode & stat.S_ISVTX) or (st.st_uid == os.getuid() and not st.st_mode & 0o022)


def _remove_stale(parent: str) -> None:
    """Remove this user's pin folders whose process is gone and that are older than STALE_S. Each is
    opened without following a link and checked through its descriptor, then emptied through it (a
    pin folder holds one link; anything else stays) and removed only if empty: a folder renamed into
    its name meanwhile (the owner of a sticky TMPDIR can rename) loses nothing. Errors are ignored."""
    now = time.time()
    try:
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        for name in os.listdir(pfd):
            pid = name[len(PREFIX) :].split("-", 1)[0]
            if name.startswith(PREFIX) and pid.isascii() and pid.isdigit() and not pid_alive(int(pid)):
                with contextlib.suppress(OSError):
                    _empty_and_remove(pfd, name, now)
    except OSError:
        pass
    finally:
        os.close(pfd)


def _empty_and_remove(pfd: int, name: str, now: float) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=pfd)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or now - st.st_mtime <= STALE_S:
            return
        for entry in os.listdir(fd):
            if stat.S_ISLNK(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=pfd)  # fails unless empty


def _release(fd: int, folder: str | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.close(fd)
