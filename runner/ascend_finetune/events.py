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
from dataclasses import dataclass
from typing import Any

from .rundir import open_append, open_regular

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


MAX_LINE_BYTES = 64 << 20  # an event line longer than this is skipped (run_started of a million classes fits)
_BLOCK = 1 << 16


def _last_complete(fd: int) -> tuple[int, int]:
    """(byte offset just past the last complete line, seq of that line) of an open log; read from the
    end, so a long log is not read whole."""
    size = os.fstat(fd).st_size
    pos, end = size, 0
    while pos > 0 and not end:  # the last newline
        start = max(0, pos - _BLOCK)
        block = os.pread(fd, pos - start, start)
        i = block.rfind(b"\n")
        if i >= 0:
            end = start + i + 1
        pos = start
    if not end:
        return 0, 0
    # The last line: from the newline before it, at most MAX_LINE_BYTES back.
    lo = max(0, end - 1 - MAX_LINE_BYTES)
    pos, line_start = end - 1, lo
    while pos > lo:
        start = max(lo, pos - _BLOCK)
        block = os.pread(fd, pos - start, start)
        i = block.rfind(b"\n")
        if i >= 0:
            line_start = start + i + 1
            break
        pos = start
    try:
        seq = json.loads(os.pread(fd, end - line_start, line_start))["seq"]
        if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0:
            return end, seq
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        pass
    # Not an event: count the complete lines instead, streamed.
    count, off = 0, 0
    while off < end:
        block = os.pread(fd, min(1 << 20, end - off), off)
        if not block:
            break
        count += block.count(b"\n")
        off += len(block)
    return end, count


def last_complete_offset(path: str) -> tuple[int, int]:
    """(byte offset just past the last complete line, seq of that line); (0, 0) for no file."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return 0, 0
    try:
        return _last_complete(fd)
    finally:
        os.close(fd)


class EventLog:
    """Appends events; continues seq of an existing log (resume) after cutting a torn last line.

    The log is opened without following a symlink and must be a regular file (UnsafeFile)."""

    def __init__(self, path: str):
        self.path = path
        fd = open_append(path)
        try:
            end, self.seq = _last_complete(fd)
            if os.fstat(fd).st_size != end:
                os.ftruncate(fd, end)
            self._f = os.fdopen(fd, "a", encoding="utf-8")
        except BaseException:
            os.close(fd)
            raise
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
            try:
                self._f.flush()
                os.fsync(self._f.fileno())
            finally:
                try:
                    self._f.close()
                except OSError:  # the flush of a full disk failed again: the descriptor still closes
                    pass


def is_event(v: Any) -> bool:
    """The envelope every reader relies on: a JSON object with an integer seq."""
    return isinstance(v, dict) and isinstance(v.get("seq"), int) and not isinstance(v.get("seq"), bool)


def read_events(path: str) -> list[dict[str, Any]]:
    """Every complete event of a log (a torn last line is left out; so are lines that are not an
    event object, and lines longer than MAX_LINE_BYTES)."""
    tail = Tail(path)
    out = []
    try:
        for line in tail.poll():
            if isinstance(line, SkippedLine):
                continue
            try:
                ev = json.loads(line)
            except (ValueError, RecursionError):  # e.g. NUL bytes a power loss left: skip the line, keep the rest
                continue
            if is_event(ev):
                out.append(ev)
    finally:
        tail.close()
    return out


@dataclass
class SkippedLine:
    """A complete line longer than MAX_LINE_BYTES, passed over without being held in memory."""

    number: int  # 1-based line number in the file
    length: int  # bytes, without the newline


class Tail:
    """Incremental reader of a growing log: poll() returns the complete lines written since last
    time, reading in bounded blocks. A line longer than `max_line` is dropped as it streams past
    and reported as a SkippedLine. The log must be a regular file (UnsafeFile otherwise)."""

    def __init__(self, path: str, max_line: int = MAX_LINE_BYTES):
        self.path = path
        self.max_line = max_line
        self._fd: int | None = None
        self._partial = bytearray()
        self._skipping = 0  # bytes of an over-long line dropped so far (0: not in one)
        self.lines = 0  # complete lines seen

    def poll(self) -> Iterator[bytes | SkippedLine]:
        if self._fd is None:
            try:
                self._fd = open_regular(self.path)
            except FileNotFoundError:
                return
        while True:
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                return
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    break
                self.lines += 1
                if self._skipping:
                    yield SkippedLine(self.lines, self._skipping + nl - start)
                    self._skipping = 0
                elif len(self._partial) + nl - start > self.max_line:
                    yield SkippedLine(self.lines, len(self._partial) + nl - start)
                    self._partial.clear()
                else:
                    line = bytes(self._partial + chunk[start:nl]) if self._partial else chunk[start:nl]
                    self._partial.clear()
                    if line.strip():
                        yield line
                start = nl + 1
            rest = len(chunk) - start
            if self._skipping:
                self._skipping += rest
            elif len(self._partial) + rest > self.max_line:
                self._skipping = len(self._partial) + rest
                self._partial.clear()
            else:
                self._partial += chunk[start:]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
