"""events.jsonl: the run's durable truth. One JSON object per line, seq contiguous from 1.

The writer appends and flushes each event as it happens and fsyncs the ones a reader must never
lose (checkpoint, run_finished). The reader yields only complete lines, so a torn last line (a
process killed mid-write) is never parsed.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

PROTOCOL_VERSION = 1
DURABLE_TYPES = {"checkpoint", "run_finished"}


def _json_default(o: Any) -> Any:
    # numpy scalars and arrays reach events from metrics; keep them plain JSON
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def sanitize(v: Any) -> Any:
    """NaN/Inf are not JSON: write them as null (the loss of a diverged step)."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, dict):
        return {k: sanitize(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [sanitize(x) for x in v]
    return v


def last_complete_offset(path: str) -> tuple[int, int]:
    """(byte offset just past the last complete line, seq of that line); (0, 0) for no file."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return 0, 0
    with f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    last_seq = 0
    if end:
        start = data.rfind(b"\n", 0, end - 1) + 1
        try:
            last_seq = int(json.loads(data[start:end])["seq"])
        except (ValueError, KeyError, TypeError):
            last_seq = sum(1 for _ in data[:end].splitlines())
    return end, last_seq


class EventLog:
    """Appends events; continues seq of an existing log (resume) after cutting a torn last line."""

    def __init__(self, path: str):
        self.path = path
        end, self.seq = last_complete_offset(path)
        if os.path.exists(path) and os.path.getsize(path) != end:
            with open(path, "r+b") as f:
                f.truncate(end)
        self._f = open(path, "a", encoding="utf-8")
        # The telemetry thread emits too: seq and the line must be taken together.
        self._lock = threading.Lock()

    def emit(self, type_: str, **payload: Any) -> dict[str, Any]:
        body = sanitize(payload)
        with self._lock:
            self.seq += 1
            event = {"v": PROTOCOL_VERSION, "seq": self.seq, "t": round(time.time(), 6), "type": type_}
            event.update(body)
            self._f.write(json.dumps(event, default=_json_default, ensure_ascii=False, allow_nan=False) + "\n")
            self._f.flush()
            if type_ in DURABLE_TYPES:
                os.fsync(self._f.fileno())
        return event

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


def read_events(path: str) -> list[dict[str, Any]]:
    """Every complete event of a log (a torn last line is left out)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    out = []
    for line in data[: data.rfind(b"\n") + 1].splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # e.g. NUL bytes a power loss left behind: skip the line, keep the rest
            continue
    return out


class Tail:
    """Incremental reader of a growing log: poll() returns the complete lines written since last time."""

    def __init__(self, path: str):
        self.path = path
        self._f: BinaryIO | None = None
        self._partial = b""

    def poll(self) -> Iterator[bytes]:
        if self._f is None:
            try:
                self._f = open(self.path, "rb")
            except FileNotFoundError:
                return
        chunk = self._f.read()
        if not chunk:
            return
        data = self._partial + chunk
        end = data.rfind(b"\n") + 1
        self._partial = data[end:]
        for line in data[:end].splitlines():
            if line.strip():
                yield line

    def close(self) -> None:
        if self._f:
            self._f.close()
