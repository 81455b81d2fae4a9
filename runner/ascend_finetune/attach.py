"""`attach`: replay events with seq > SINCE, then follow the growing log until run_finished.

Polling (20 ms by default) rather than inotify: it works on every filesystem (NFS on clusters too)
and keeps write-to-stdout latency well under 100 ms (bench/attach_latency.py).

The log may hold lines that are not events (another user can write to a shared run directory):
such a line is not printed; a `{"warning": ...}` line on stderr says which one, and the good lines
after it are streamed as usual. A log or status.json that is not a regular file ends attach with an
`{"error": {"kind": "bad_run", ...}}` line, exit 1.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from .checkpoints.errors import error_dict
from .events import MAX_LINE_BYTES, SkippedLine, Tail, is_event
from .rundir import STATUS_MAX_BYTES, UnsafeFile, effective_state, load_json, read_json, status_path

LIVENESS_EVERY_S = 1.0


def _error(kind: str, message: str, **params: Any) -> bytes:
    """The error line; `kind` is its code too (bad_run, gone, lost), `params` its named values."""
    return json.dumps({"error": error_dict(kind, message, kind, params)}, ensure_ascii=False).encode() + b"\n"


def _warn(line: int, message: str) -> None:
    w = {"warning": {"kind": "bad_line", "line": line, "message": f"events.jsonl line {line} skipped: {message}"}}
    sys.stderr.write(json.dumps(w, ensure_ascii=False) + "\n")
    sys.stderr.flush()


def _status_problem(run_dir: str) -> str | None:
    """Why status.json cannot be read (not a regular file, too large, not JSON); None when it can,
    or when it is missing (a run that is not launched yet)."""
    try:
        status = load_json(status_path(run_dir), STATUS_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return str(e) if isinstance(e, (UnsafeFile, ValueError)) else f"status.json: {e.strerror}"
    return None if isinstance(status, dict) else "status.json is not a JSON object"


class _Reader:
    """The lines of the log as events: a line that is not an event object is skipped with a warning."""

    def __init__(self, tail: Tail):
        self.tail = tail

    def events(self) -> list[tuple[bytes, dict[str, Any]]]:
        out = []
        for line in self.tail.poll():
            if isinstance(line, SkippedLine):
                _warn(line.number, f"longer than {MAX_LINE_BYTES} bytes ({line.length})")
                continue
            try:
                ev = json.loads(line)
            except (ValueError, RecursionError):
                # a torn line is held back until its newline, so this is damage (NUL bytes of a
                # power loss) or junk: say so, keep going
                _warn(self.tail.lines, "not JSON")
                continue
            if not is_event(ev):
                _warn(self.tail.lines, "not an event (a JSON object with an integer seq)")
                continue
            out.append((line, ev))
        return out


def attach(run_dir: str, since: int, follow: bool = True, poll_s: float = 0.02) -> int:
    tail = Tail(os.path.join(run_dir, "events.jsonl"))
    reader = _Reader(tail)
    out = sys.stdout.buffer
    last_check = time.monotonic()
    finished = False  # the log so far ends with run_finished (a resume in place appends a new run_started)
    seen_dir = os.path.isdir(run_dir)
    try:
        problem = _status_problem(run_dir)
        if problem:
            out.write(
                _error(
                    "bad_run", f"{problem}: {run_dir} is not a usable run directory", problem=problem, run_dir=run_dir
                )
            )
            out.flush()
            return 1
        while True:
            wrote = got = False
            try:
                batch = reader.events()
            except UnsafeFile as e:
                out.write(
                    _error("bad_run", f"{e}: {run_dir} is not a usable run directory", problem=str(e), run_dir=run_dir)
                )
                out.flush()
                return 1
            for line, ev in batch:
                got = True
                # A sweep folder (sweep/folder.py) is followed the same way: its scheduler's events
                # start with sweep_started and end with sweep_finished.
                if ev.get("type") in ("run_finished", "run_started", "sweep_finished", "sweep_started"):
                    finished = ev["type"] in ("run_finished", "sweep_finished")
                if ev["seq"] <= since:
                    continue
                out.write(line + b"\n")
                wrote = True
            if wrote:
                out.flush()
            if not follow or (finished and not got):
                return 0
            now = time.monotonic()
            if now - last_check >= LIVENESS_EVERY_S:
                last_check = now
                # A run directory deleted meanwhile (Delete Run, a cleaned scratch disk) will never
                # finish either; without this check nothing would end this process. One not made
                # yet is another matter: attach may start before launch has created it.
                if os.path.isdir(run_dir):
                    seen_dir = True
                elif seen_dir:
                    out.write(_error("gone", f"the run directory {run_dir} no longer exists", run_dir=run_dir))
                    out.flush()
                    return 1
                problem = _status_problem(run_dir)
                if problem:
                    out.write(
                        _error(
                            "bad_run",
                            f"{problem}: {run_dir} is not a usable run directory",
                            problem=problem,
                            run_dir=run_dir,
                        )
                    )
                    out.flush()
                    return 1
                # A run whose process is gone without run_finished will never finish: say so and stop.
                if os.path.isfile(status_path(run_dir)) and effective_state(run_dir) == "lost":
                    for line, ev in reader.events():  # anything written just before it died
                        if ev["seq"] > since:
                            out.write(line + b"\n")
                    status = read_json(status_path(run_dir), {}, STATUS_MAX_BYTES)
                    pid = status.get("pid") if isinstance(status, dict) else None
                    out.write(
                        _error("lost", f"the training process (pid {pid}) is gone without finishing the run", pid=pid)
                    )
                    out.flush()
                    return 1
            time.sleep(poll_s)
    except BrokenPipeError:
        return 0
    finally:
        tail.close()
