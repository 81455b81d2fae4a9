"""Control requests to a running run: files in RUN_DIR/control/, polled once per step.

A directory's mtime changes when a request file lands in it, so the per-step check is one stat().
Files rather than signals so the same request works over any SSH command line and survives a
runner that is busy compiling; SIGTERM/SIGINT still mean "stop" for a process manager.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import time

from .rundir import UnsafeFile, open_regular

ACTIONS = ("stop", "checkpoint")


def control_dir(run_dir: str) -> str:
    return os.path.join(run_dir, "control")


def ensure_control_dir(run_dir: str) -> str:
    """control/, created if missing; a symlink or a file there is refused (UnsafeFile): the train
    process deletes the request files it finds in it, and must never do that in another folder."""
    d = control_dir(run_dir)
    try:
        os.mkdir(d)
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(d).st_mode):
        raise UnsafeFile(
            "control is not a folder (a symlink or a file): refusing to use it", d, "not_folder", file="control"
        )
    return d


def drop_requests(folder: str) -> None:
    """Remove the requests waiting in FOLDER/control/ (a sweep's, left for a scheduler that never read
    them), through the folder's descriptor: never a symlink's folder. One being written stays."""
    try:
        fd = os.open(control_dir(folder), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return  # none yet, or not a folder: ensure_control_dir refuses that itself
    try:
        for name in os.listdir(fd):
            if not name.startswith("."):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def request(run_dir: str, action: str) -> str:
    d = ensure_control_dir(run_dir)
    name = f"{action}-{time.time_ns()}-{secrets.token_hex(8)}"
    tmp = os.path.join(d, f".{name}")
    fd = open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as f:
        f.write(action)
    os.replace(tmp, os.path.join(d, name))
    return os.path.join(d, name)


class ControlInbox:
    def __init__(self, run_dir: str):
        self.dir = ensure_control_dir(run_dir)
        self._mtime = 0

    def poll(self) -> list[tuple[str, str]]:
        """(action, file) pending since the last poll; a file is removed by `done` once acted on."""
        try:
            mtime = os.stat(self.dir).st_mtime_ns
        except FileNotFoundError:
            return []
        if mtime == self._mtime:
            return []
        self._mtime = mtime
        out = []
        for name in sorted(os.listdir(self.dir)):
            action = name.split("-", 1)[0]
            if not name.startswith(".") and action in ACTIONS:
                out.append((action, os.path.join(self.dir, name)))
        return out

    def clear(self) -> None:
        for name in os.listdir(self.dir) if os.path.isdir(self.dir) else []:
            if not name.startswith("."):  # a `control` call's file being written
                self.done(os.path.join(self.dir, name))

    @staticmethod
    def done(path: str) -> None:
        try:
            os.remove(path)  # a symlink is removed itself, never its target
        except (FileNotFoundError, IsADirectoryError):
            pass
