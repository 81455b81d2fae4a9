"""Control requests to a running run: files in RUN_DIR/control/, polled once per step.

A directory's mtime changes when a request file lands in it, so the per-step check is one stat().
Files rather than signals so the same request works over any SSH command line and survives a
runner that is busy compiling; SIGTERM/SIGINT still mean "stop" for a process manager.
"""

from __future__ import annotations

import os
import secrets
import time

ACTIONS = ("stop", "checkpoint")


def control_dir(run_dir: str) -> str:
    return os.path.join(run_dir, "control")


def request(run_dir: str, action: str) -> str:
    d = control_dir(run_dir)
    os.makedirs(d, exist_ok=True)
    name = f"{action}-{time.time_ns()}-{secrets.token_hex(2)}"
    tmp = os.path.join(d, f".{name}")
    with open(tmp, "w") as f:
        f.write(action)
    os.replace(tmp, os.path.join(d, name))
    return os.path.join(d, name)


class ControlInbox:
    def __init__(self, run_dir: str):
        self.dir = control_dir(run_dir)
        os.makedirs(self.dir, exist_ok=True)
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
            os.remove(path)
        except FileNotFoundError:
            pass
