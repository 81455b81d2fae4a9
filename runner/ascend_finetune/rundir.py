"""The run directory: status.json (atomic), run ids, liveness, and listing runs with `lost` detection."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import time
from typing import Any


def atomic_write_json(path: str, obj: Any) -> None:
    """Write to a temporary name, fsync, rename: readers see the old or the new file, never half."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path) or ".")


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


def read_json(path: str, default: Any = None) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):  # missing, unreadable, not UTF-8, not JSON
        return default


def slug(name: str) -> str:
    """A file-name-safe form of a run name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")[:40] or "run"


def new_run_id(name: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(name)}-{secrets.token_hex(2)}"


def status_path(run_dir: str) -> str:
    return os.path.join(run_dir, "status.json")


def write_status(run_dir: str, **fields: Any) -> dict[str, Any]:
    status = read_json(status_path(run_dir), {}) or {}
    status.update(fields)
    atomic_write_json(status_path(run_dir), status)
    return status


LAUNCH_GRACE_S = 120  # a launched run has this long to start Python and write its own pid


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
    if not pid:
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


def effective_state(run_dir: str, status: dict[str, Any] | None = None) -> str:
    """status.json's state, except a `running` run whose process is gone on this host is `lost`
    (a launched run still starting, with no pid of its own yet, gets LAUNCH_GRACE_S)."""
    status = status if status is not None else read_json(status_path(run_dir), {}) or {}
    state = status.get("state", "lost")
    if state != "running" or status.get("host") not in (None, socket.gethostname()):
        return state
    pid = status.get("pid")
    if pid is None:
        return "running" if time.time() - (status.get("started_at") or 0) < LAUNCH_GRACE_S else "lost"
    if not pid_alive(pid):
        return "lost"
    started = status.get("pid_start")
    if started is not None and process_start(pid) not in (None, started):
        return "lost"  # the pid now belongs to another process
    return state


def summarize(run_dir: str) -> dict[str, Any] | None:
    status = read_json(status_path(run_dir))
    if not isinstance(status, dict):
        return None
    spec = read_json(os.path.join(run_dir, "spec.json"), {}) or {}
    last_step = last_event_of(os.path.join(run_dir, "events.jsonl"), "step")
    manifest = read_json(os.path.join(run_dir, "checkpoints.json"), []) or []
    best = next(
        (
            {k: e.get(k) for k in ("file", "epoch", "step", "metrics")}
            for e in manifest
            if isinstance(e, dict) and e.get("best")
        ),
        None,
    )
    return {
        **status,
        "state": effective_state(run_dir, status),
        "run_dir": os.path.abspath(run_dir),
        "name": spec.get("name"),
        "backbone": spec.get("model", {}).get("backbone"),
        "epochs": (spec.get("train") or {}).get("epochs"),
        "epoch": last_step and last_step.get("epoch"),
        "step": last_step and last_step.get("step"),
        "loss": last_step and last_step.get("loss"),
        "best": best,
    }


def last_event_of(path: str, type_: str, window: int = 1 << 16) -> dict[str, Any] | None:
    """The last complete event of a type, read from the end of the log: `ls` must not parse the
    whole history of a million-step run."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            f.seek(max(0, end - window))
            data = f.read()
    except OSError:
        return None
    lines = data[: data.rfind(b"\n") + 1].splitlines()
    if end > window:
        lines = lines[1:]  # the first one may be cut
    for line in reversed(lines):
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("type") == type_:
            return ev
    return None


def list_runs(root: str) -> list[dict[str, Any]]:
    """Every run directory under ROOT; other entries and unreadable runs are passed over."""
    runs = []
    if os.path.isdir(root):
        for name in os.listdir(root):
            path = os.path.join(root, name)
            if not os.path.isdir(path):
                continue
            try:
                info = summarize(path)
            except (OSError, ValueError):
                continue
            if info:
                runs.append(info)
    runs.sort(key=lambda r: r.get("started_at") or 0, reverse=True)
    return runs
