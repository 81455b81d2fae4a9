"""`attach`: replay events with seq > SINCE, then follow the growing log until run_finished.

Polling (20 ms by default) rather than inotify: it works on every filesystem (NFS on clusters too)
and keeps write-to-stdout latency well under 100 ms (bench/attach_latency.py).
"""

from __future__ import annotations

import json
import os
import sys
import time

from .events import Tail
from .rundir import effective_state, read_json, status_path

LIVENESS_EVERY_S = 1.0


def attach(run_dir: str, since: int, follow: bool = True, poll_s: float = 0.02) -> int:
    tail = Tail(os.path.join(run_dir, "events.jsonl"))
    out = sys.stdout.buffer
    last_check = time.monotonic()
    finished = False  # the log so far ends with run_finished (a resume in place appends a new run_started)
    seen_dir = os.path.isdir(run_dir)
    try:
        while True:
            wrote = got = False
            for line in tail.poll():
                got = True
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line is only complete once its newline is written; this should not happen
                if ev.get("type") in ("run_finished", "run_started"):
                    finished = ev["type"] == "run_finished"
                if ev.get("seq", 0) <= since:
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
                    out.write(
                        json.dumps(
                            {"error": {"kind": "gone", "message": f"the run directory {run_dir} no longer exists"}}
                        ).encode()
                        + b"\n"
                    )
                    out.flush()
                    return 1
                # A run whose process is gone without run_finished will never finish: say so and stop.
                if os.path.isfile(status_path(run_dir)) and effective_state(run_dir) == "lost":
                    for line in tail.poll():  # anything written just before it died
                        try:
                            ev = json.loads(line)
                        except ValueError:
                            continue
                        if ev.get("seq", 0) > since:
                            out.write(line + b"\n")
                    status = read_json(status_path(run_dir), {}) or {}
                    out.write(
                        json.dumps(
                            {
                                "error": {
                                    "kind": "lost",
                                    "message": "the training process "
                                    f"(pid {status.get('pid')}) is gone without finishing the run",
                                }
                            }
                        ).encode()
                        + b"\n"
                    )
                    out.flush()
                    return 1
            time.sleep(poll_s)
    except BrokenPipeError:
        return 0
    finally:
        tail.close()
