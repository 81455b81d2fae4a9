"""What the `sweep` and `sweep-stop` commands do (cli.py only parses their flags and prints).

`sweep SPEC --root ROOT` validates the spec, makes the sweep folder and runs the scheduler;
`sweep SWEEP_DIR` runs the scheduler of an existing sweep again (resume). With `--detach` the
scheduler runs in a new session, like `launch`'s training process, with its stderr in the sweep's
console.log, and the command prints {sweep_id, sweep_dir, pid} at once. Bad input fails before
anything is detached.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import sys
import time
from typing import Any

from ..control import drop_requests, request
from ..rundir import (
    STATUS_MAX_BYTES,
    atomic_write_json,
    effective_state,
    initial_status,
    open_append,
    read_json,
    status_path,
    write_status,
)
from ..spec import Problem, SpecError
from . import folder
from .rdb import driver_problem
from .sweepspec import load_sweep
from .trialrun import PKG_PARENT

SWEEP_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}")


class BadInput(Exception):
    """A refused sweep command: the broad `kind`, the cause's code `why` and its `params`."""

    def __init__(self, kind: str, message: str, why: str | None = None, **params: Any):
        super().__init__(message)
        self.kind, self.why, self.params = kind, why or kind, params


def prepare(target: str, root: str | None, sweep_id: str | None) -> tuple[str, bool]:
    """(the sweep folder, whether it existed): a new one for a spec file, or the folder given."""
    if os.path.isdir(target):
        if not folder.is_sweep_dir(target):
            raise BadInput(
                "bad_input",
                f"{target} is not a sweep folder (no sweep.json): pass a sweep spec or a sweep folder",
                "not_a_sweep_folder",
                folder=target,
            )
        storage = folder.read(target)["spec"]["storage"]
        problem = driver_problem(storage) if storage else None
        if problem:  # say so here, not in a detached scheduler's console.log
            raise SpecError([Problem("storage", *problem)])
        return os.path.abspath(target), True
    if not root:
        raise BadInput(
            "bad_input",
            "--root is required with a sweep spec: the runs root the trials' runs go under",
            "sweep_needs_root",
        )
    if sweep_id is not None and not SWEEP_ID.fullmatch(sweep_id):
        raise BadInput(
            "bad_input",
            f"--sweep-id {sweep_id!r}: use up to 60 letters, digits, '.', '_' and '-'",
            "bad_sweep_id",
            sweep_id=sweep_id,
        )
    sweep = load_sweep(target)  # SpecError with every problem
    sid = sweep_id or folder.new_sweep_id(sweep["name"])
    existing = os.path.join(root, folder.SWEEPS, sid)
    if folder.is_sweep_dir(existing):
        if folder.read(existing)["spec"] != sweep:
            raise BadInput(
                "busy",
                f"{existing} holds another spec: resume it with `sweep {existing}`, or pick a new --sweep-id",
                "sweep_spec_differs",
                folder=existing,
            )
        return os.path.abspath(existing), True
    try:
        return folder.create(root, sweep, sid), False
    except FileExistsError:
        raise BadInput(
            "busy",
            f"{existing} already exists and is not a sweep folder: pick another --sweep-id",
            "sweep_folder_taken",
            folder=existing,
        ) from None


def detach(sweep_dir: str) -> int:
    """Start `python -m ascend_finetune sweep SWEEP_DIR` in a new session; its pid.

    A first status.json (running, no pid yet) is written before the scheduler exists: sweep-ls and
    sweep-status then say running at once, where the editor, listing the sweep while the scheduler's
    Python still imported Optuna, saw no state it knows. It is written holding the scheduler's lock,
    so it never lands over a scheduler that has written its own pid; the scheduler then writes its pid
    over it, and one that never does reads as lost after the launch grace, as a launched run does."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = PKG_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # The scheduler keeps the stops sent while it starts only if the status still carries this token:
    # not the time since the detach (a slow start on a loaded box) nor the host (a shared folder) decides.
    launch_id = secrets.token_hex(8)
    argv = [sys.executable, "-m", "ascend_finetune", "sweep", sweep_dir, "--launch-id", launch_id]
    # The log first: one that cannot be opened (a planted symlink) fails before anything changed.
    with os.fdopen(open_append(os.path.join(sweep_dir, folder.CONSOLE)), "ab") as log:
        try:
            held = folder.lock(sweep_dir)
        except folder.Busy:
            raise BadInput(
                "busy",
                f"a scheduler is already running {sweep_dir}: see sweep-status, or sweep-stop it",
                "sweep_busy",
                folder=sweep_dir,
            ) from None
        try:
            before = read_json(status_path(sweep_dir), None, STATUS_MAX_BYTES)
            if isinstance(before, dict) and effective_state(sweep_dir, before) == "running":
                # Another detach's scheduler, still starting (no pid of its own yet): a stop sent to
                # it waits in control/ and must not be dropped below.
                raise BadInput(
                    "busy",
                    f"a scheduler is starting on {sweep_dir}: see sweep-status, or sweep-stop it",
                    "sweep_busy",
                    folder=sweep_dir,
                )
            drop_requests(sweep_dir)  # a stop left for a scheduler that never ran must not end this one
            mine = initial_status(sweep_dir, None)
            # pid_start: not a resumed sweep's last scheduler's
            write_status(sweep_dir, kind="sweep", pid_start=None, launch_id=launch_id)
        finally:
            os.close(held)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                cwd=sweep_dir,
                env=env,
                close_fds=True,
            )
        except BaseException:
            _restore_status(sweep_dir, before, mine)  # nothing started: the sweep is as it was
            raise
    return proc.pid


def _restore_status(sweep_dir: str, before: Any, mine: dict[str, Any]) -> None:
    """status.json back to `before`, under the lock and only while it is still the one this detach
    wrote (`mine`): another detach or scheduler may have taken the sweep since the lock was let go."""
    try:
        held = folder.lock(sweep_dir)
    except (folder.Busy, OSError):
        return
    try:
        now = read_json(status_path(sweep_dir), None, STATUS_MAX_BYTES)
        if not (isinstance(now, dict) and now.get("pid") is None and now.get("started_at") == mine.get("started_at")):
            return
        with contextlib.suppress(OSError):
            if isinstance(before, dict):
                atomic_write_json(status_path(sweep_dir), before)
            else:
                os.unlink(status_path(sweep_dir))
    finally:
        os.close(held)


def stop(sweep_dir: str, drain: bool, timeout: float) -> dict[str, Any]:
    """Ask the scheduler to stop (its running trials too) or to drain (start nothing new, let the
    running trials finish); wait up to `timeout` s for the sweep to end (0: do not wait)."""
    doc = folder.read(sweep_dir)

    def state_now() -> str:
        return effective_state(sweep_dir) if os.path.isfile(status_path(sweep_dir)) else folder.unstarted_state(doc)

    state = state_now()
    if state != "running":
        raise BadInput(
            "not_running",
            f"the sweep is {state}; only a running sweep can be stopped",
            "sweep_not_running",
            state=state,
        )
    request(sweep_dir, "drain" if drain else "stop")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and state_now() == "running":
        time.sleep(0.1)
    state = state_now()
    return {"action": "drain" if drain else "stop", "state": state, "handled": state != "running"}
