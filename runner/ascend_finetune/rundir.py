"""The run directory: safe reads and writes, status.json (atomic), run ids, liveness and `lost` detection
(listing runs is runlist.py).

A run directory may be writable by other users of a shared machine, so every file here is handled
as untrusted: the runner opens no symlink it did not make (O_NOFOLLOW), reads regular files only
(O_NONBLOCK, so a FIFO cannot hang the open, then fstat), caps every read, checks the type of every
field it uses, and creates temporary files exclusively under names nobody can guess.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
import socket
import stat
import time
from typing import Any

from .checkpoints.errors import error_dict

# Read caps per kind of file: far above what the runner writes, far below what hurts a reader.
STATUS_MAX_BYTES = 1 << 20
JSON_MAX_BYTES = 4 << 20  # spec.json, rank verdicts, eval results
MANIFEST_MAX_BYTES = 16 << 20  # checkpoints.json (keep_max has no upper bound)
CLASSES_MAX_BYTES = 64 << 20  # classes.json of a run with up to a million classes

_NOFOLLOW = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFile(OSError):
    """A file of a run directory that is not a regular file the runner could have written: a
    symlink, a FIFO, a device, a directory, or one larger than its kind's cap. An OSError, so a
    reader that passes over unreadable files passes over this one too."""

    def __init__(self, message: str, path: str = "", cause: str = "not_regular", **params: Any):
        super().__init__(message)
        self.path, self.why = path, "unsafe_file"
        self.params = {"path": path, "cause": cause, **params}  # cause: symlink, not_regular, too_large, not_folder

    def as_dict(self) -> dict[str, Any]:
        """The error object the CLI prints and run_finished records (protocol.md, `unsafe_file`)."""
        return error_dict("unsafe_file", f"{self}: {self.path}", "unsafe_file", self.params, path=self.path)


def _name(path: str) -> str:
    parent = os.path.basename(os.path.dirname(path))
    base = os.path.basename(path)
    return f"{parent}/{base}" if parent in ("checkpoints", "control", "ranks", "eval") else base


def open_regular(path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """os.open without following a symlink in the last component and without blocking on a FIFO;
    the descriptor of a regular file, or UnsafeFile. FileNotFoundError passes through."""
    try:
        fd = os.open(path, flags | _NOFOLLOW, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeFile(
                f"{_name(path)} is a symlink: refusing to follow it", path, "symlink", file=_name(path)
            ) from None
        if e.errno in (errno.ENXIO, errno.EISDIR, errno.EWOULDBLOCK):  # a socket or FIFO; a directory
            raise UnsafeFile(f"{_name(path)} is not a regular file", path, file=_name(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{_name(path)} is not a regular file", path, file=_name(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str, limit: int) -> bytes:
    """A regular file's content, at most `limit` bytes (UnsafeFile when larger)."""
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise UnsafeFile(
                f"{_name(path)} is larger than {limit} bytes", path, "too_large", file=_name(path), limit=limit
            )
        chunks, size = [], 0
        while True:  # the size may change while we read: the cap holds whatever it does
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise UnsafeFile(
                    f"{_name(path)} is larger than {limit} bytes", path, "too_large", file=_name(path), limit=limit
                )
        return b"".join(chunks)
    finally:
        os.close(fd)


def load_json(path: str, limit: int = JSON_MAX_BYTES) -> Any:
    """A JSON file's value. FileNotFoundError when missing, UnsafeFile (an OSError) for a file that
    is not a regular one or too large, ValueError (with the file's name) when it does not decode."""
    data = read_bytes(path, limit)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:  # RecursionError: [[[[... nested too deep
        raise ValueError(f"{_name(path)} is not valid JSON") from e


def read_json(path: str, default: Any = None, limit: int = JSON_MAX_BYTES) -> Any:
    try:
        return load_json(path, limit)
    except (OSError, ValueError):  # missing, unreadable, not a regular file, too large, not UTF-8, not JSON
        return default


def atomic_write_json(path: str, obj: Any) -> None:
    """Write to a temporary name, fsync, rename: readers see the old or the new file, never half.

    The temporary file is created exclusively (O_EXCL|O_NOFOLLOW) under a random name, so a file or
    symlink planted in the directory is never written through; the rename replaces a symlink at
    `path` itself, not its target. A failed write (a full disk) removes the temporary file."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        replace_file(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    fsync_dir(os.path.dirname(path) or ".")


def replace_file(tmp: str, path: str) -> None:
    """os.replace; a folder at `path` (planted there, or another user's) is UnsafeFile, not the
    IsADirectoryError a rename over a folder raises."""
    try:
        os.replace(tmp, path)
    except IsADirectoryError:
        raise UnsafeFile(f"{_name(path)} is not a regular file", path, file=_name(path)) from None


def create_temp(path: str, suffix: str = "") -> tuple[int, str]:
    """(fd, name) of a new empty file `NAME.tmp-<random>SUFFIX` next to `path`, created exclusively."""
    for _ in range(100):
        tmp = f"{path}.tmp-{secrets.token_hex(8)}{suffix}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name next to {path}")


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def open_append(path: str) -> int:
    """An O_APPEND descriptor of a regular file (created if missing); never through a symlink."""
    return open_regular(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)


def open_lock(path: str) -> int:
    """A descriptor to flock of a lock file (created if missing, never truncated, never a symlink or
    a FIFO: a FIFO planted there would block an open for writing forever)."""
    return open_regular(path, os.O_RDWR | os.O_CREAT)


def fsync_dir(path: str) -> None:
    """Make a rename in `path` durable."""
    try:
        dfd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def slug(name: str) -> str:
    """A file-name-safe form of a run name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:40] or "run"


def new_run_id(name: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(name)}-{secrets.token_hex(2)}"


def status_path(run_dir: str) -> str:
    return os.path.join(run_dir, "status.json")


def write_status(run_dir: str, **fields: Any) -> dict[str, Any]:
    status = read_json(status_path(run_dir), {}, STATUS_MAX_BYTES)
    if not isinstance(status, dict):
        status = {}
    status.update(fields)
    atomic_write_json(status_path(run_dir), status)
    return status


# A full disk must not keep a run from recording how it ended. Each train process that holds its run
# directory keeps RESERVE_BYTES allocated in RESERVE from its start, and frees them just before it
# writes its end (run_finished, status.json, its result line in console.log): those few KiB then fit
# even when checkpoints or events filled the disk. A file rather than a pre-sized status.json,
# because writing status.json in place would give up its atomic rename.
RESERVE = ".reserve"
RESERVE_BYTES = 256 << 10


def make_reserve(run_dir: str) -> None:
    """Allocate RESERVE (best effort: a disk already too full for it gets no reserve)."""
    path = os.path.join(run_dir, RESERVE)
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
    except OSError:
        return
    try:
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise
            os.ftruncate(fd, 0)  # a file system without fallocate (some NFS): real zeros
            os.write(fd, b"\0" * RESERVE_BYTES)
        os.fsync(fd)
    except OSError:
        os.close(fd)
        _unlink_quietly(path)
        return
    os.close(fd)


def release_reserve(run_dir: str) -> None:
    _unlink_quietly(os.path.join(run_dir, RESERVE))


LAUNCH_GRACE_S = 120  # a launched run has this long to start Python and write its own pid
MAX_PID = 1 << 22  # Linux's pid_max ceiling (PID_MAX_LIMIT)


def initial_status(run_dir: str, pid: int | None) -> dict[str, Any]:
    return write_status(
        run_dir,
        run_id=os.path.basename(os.path.abspath(run_dir)),
        state="running",
        pid=pid,
        host=socket.gethostname(),
        started_at=time.time(),
        ended_at=None,
        exit_code=None,
    )


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): with the pid
    it names one process, where a pid alone can be reused after a crash or a container restart."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int | None) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < MAX_PID:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not a live run
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_time(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


# status.json's fields and the values each may hold (null is always allowed).
_STATUS_FIELDS: dict[str, tuple[str, Any]] = {
    "run_id": ("a string", lambda v: isinstance(v, str)),
    "state": ("a string", lambda v: isinstance(v, str)),
    "pid": (f"an integer from 1 to {MAX_PID - 1}", lambda v: is_int(v) and 0 < v < MAX_PID),
    "pid_start": ("a non-negative integer", lambda v: is_int(v) and v >= 0),
    "node_rank": ("a non-negative integer", lambda v: is_int(v) and v >= 0),
    "host": ("a string", lambda v: isinstance(v, str)),
    "started_at": ("a number (unix seconds)", is_time),
    "ended_at": ("a number (unix seconds)", is_time),
    "exit_code": ("an integer", is_int),
}


def short_json(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def check_status(status: Any) -> tuple[dict[str, Any], list[str]]:
    """status.json's value with every field of the wrong type set to null, and what was wrong."""
    if not isinstance(status, dict):
        return {}, ["status.json is not a JSON object"]
    clean, problems = dict(status), []
    for key, (want, ok) in _STATUS_FIELDS.items():
        v = status.get(key)
        if v is not None and not ok(v):
            problems.append(f"status.json: {key} must be {want} or null, got {short_json(v)}")
            clean[key] = None
    return clean, problems


def effective_state(run_dir: str, status: dict[str, Any] | None = None) -> str:
    """status.json's state, except a `running` run whose process is gone on this host is `lost`
    (a launched run still starting, with no pid of its own yet, gets LAUNCH_GRACE_S). A status.json
    that cannot be read, or whose fields have the wrong types, names no live process: `lost`."""
    if status is None:
        status = read_json(status_path(run_dir), {}, STATUS_MAX_BYTES)
    status, problems = check_status(status)
    state = status.get("state") or "lost"
    if state != "running" or status.get("host") not in (None, socket.gethostname()):
        return state
    if problems:
        return "lost"
    pid = status.get("pid")
    if pid is None:
        return "running" if time.time() - (status.get("started_at") or 0) < LAUNCH_GRACE_S else "lost"
    if not pid_alive(pid):
        return "lost"
    started = status.get("pid_start")
    if started is not None and process_start(pid) not in (None, started):
        return "lost"  # the pid now belongs to another process
    return state
