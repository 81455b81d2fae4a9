"""The sweep folder `ROOT/sweeps/<sweep_id>/` and its files (docs/protocol.md, "Sweeps"):

    sweep.json      the resolved sweep spec, the runs root and the sweep id (written once)
    status.json     the scheduler's state, as a run's: running|completed|stopped|failed (lost when
                    its process is gone: rundir.effective_state)
    events.jsonl    the scheduler's events (same envelope as a run's)
    study.journal   Optuna's journal storage (unless the spec names a database)
    console.log     the scheduler's stderr (Optuna's log lines)
    trials/         each trial's run spec, as given to `launch`
    control/        stop and drain requests (sweep-stop)
    scheduler.lock  flocked by the running scheduler: one scheduler per sweep

Trials' runs are normal run directories under ROOT, named `<sweep_id>-t<number>`, with meta tags
`sweep:<id>` and `trial:<n>` and a `sweep.json` link back here.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import time
from typing import Any

from ..rundir import LAUNCH_GRACE_S, atomic_write_json, open_lock, read_json, slug

SWEEPS = "sweeps"
SWEEP_JSON = "sweep.json"
EVENTS = "events.jsonl"
JOURNAL = "study.journal"
CONSOLE = "console.log"
LOCK = "scheduler.lock"
FORMAT = 1


class Busy(Exception):
    """Another scheduler holds the sweep (`folder`)."""

    def __init__(self, message: str, folder: str):
        super().__init__(message)
        self.folder = folder


def new_sweep_id(name: str) -> str:
    # Short enough that `sweep:<id>` fits a meta tag (64 characters) and `<id>-t<n>` a run id.
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(name)[:20]}-{secrets.token_hex(2)}"


def trial_run_id(sweep_id: str, number: int) -> str:
    return f"{sweep_id}-t{number}"


def is_sweep_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, SWEEP_JSON))


def create(root: str, sweep: dict[str, Any], sweep_id: str) -> str:
    d = os.path.abspath(os.path.join(root, SWEEPS, sweep_id))
    os.makedirs(os.path.join(root, SWEEPS), exist_ok=True)
    os.mkdir(d)  # FileExistsError: a sweep id names one sweep
    os.mkdir(os.path.join(d, "trials"))
    atomic_write_json(
        os.path.join(d, SWEEP_JSON),
        {
            "format": FORMAT,
            "sweep_id": sweep_id,
            "root": os.path.abspath(root),
            "created_at": time.time(),
            "spec": sweep,
        },
    )
    return d


def read(sweep_dir: str) -> dict[str, Any]:
    """sweep.json's value; ValueError naming what is wrong when it is not a sweep this runner wrote."""
    doc = read_json(os.path.join(sweep_dir, SWEEP_JSON))
    if not isinstance(doc, dict) or not isinstance(doc.get("spec"), dict) or not isinstance(doc.get("sweep_id"), str):
        raise ValueError(f"{sweep_dir} is not a sweep folder (sweep.json missing or unreadable)")
    if doc.get("format") != FORMAT:
        raise ValueError(f"{sweep_dir}/sweep.json has format {doc.get('format')!r}; this runner reads {FORMAT}")
    return doc


def lock(sweep_dir: str) -> int:
    """The flocked descriptor of scheduler.lock (held for the scheduler's life), or Busy."""
    fd = open_lock(os.path.join(sweep_dir, LOCK))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Busy(f"a scheduler is already running {sweep_dir}", sweep_dir) from None
    return fd


def unstarted_state(doc: dict[str, Any]) -> str:
    """The state of a sweep whose folder has no status.json yet (`sweep SPEC` in the foreground before
    its scheduler writes one; `--detach` writes one first): running for as long as a launched run has
    to start, from sweep.json's created_at, then lost. Only the states of docs/protocol.md: the
    editor leaves out a sweep in any other."""
    made = doc.get("created_at")
    fresh = isinstance(made, (int, float)) and not isinstance(made, bool) and time.time() - made < LAUNCH_GRACE_S
    return "running" if fresh else "lost"
