"""The run directory: status.json (atomic), run ids, liveness, and listing runs with `lost` detection."""
from __future__ import annotations

import json
import os
import re
import secrets
import socket
import time
from typing import Any

from .events import read_events

STATES = ("running", "completed", "stopped", "failed", "lost")


def atomic_write_json(path: str, obj: Any) -> None:
    """Write to a temporary name, fsync, rename: readers see the old or the new file, never half."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    try:
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
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
    except (FileNotFoundError, json.JSONDecodeError):
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


def initial_status(run_dir: str, pid: int) -> dict[str, Any]:
    return write_status(run_dir, run_id=os.path.basename(os.path.abspath(run_dir)), state="running", pid=pid,
                        host=socket.gethostname(), started_at=time.time(), ended_at=None, exit_code=None)


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
    """status.json's state, except a `running` run whose process is gone on this host is `lost`."""
    status = status if status is not None else read_json(status_path(run_dir), {}) or {}
    state = status.get("state", "lost")
    if state == "running" and status.get("host") in (None, socket.gethostname()) and not pid_alive(status.get("pid")):
        return "lost"
    return state


def summarize(run_dir: str) -> dict[str, Any] | None:
    status = read_json(status_path(run_dir))
    if not isinstance(status, dict):
        return None
    spec = read_json(os.path.join(run_dir, "spec.json"), {}) or {}
    last_step = best = None
    for ev in read_events(os.path.join(run_dir, "events.jsonl")):
        if ev.get("type") == "step":
            last_step = ev
        elif ev.get("type") == "eval" and (best is None or ev.get("val_acc", 0) > best["val_acc"]):
            best = {"val_acc": ev.get("val_acc"), "epoch": ev.get("epoch"), "step": ev.get("step")}
    return {
        **status,
        "state": effective_state(run_dir, status),
        "run_dir": os.path.abspath(run_dir),
        "name": spec.get("name"),
        "backbone": spec.get("model", {}).get("backbone"),
        "epoch": last_step and last_step.get("epoch"),
        "step": last_step and last_step.get("step"),
        "loss": last_step and last_step.get("loss"),
        "best": best,
    }


def list_runs(root: str) -> list[dict[str, Any]]:
    runs = []
    if os.path.isdir(root):
        for name in os.listdir(root):
            info = summarize(os.path.join(root, name))
            if info:
                runs.append(info)
    runs.sort(key=lambda r: r.get("started_at") or 0, reverse=True)
    return runs
