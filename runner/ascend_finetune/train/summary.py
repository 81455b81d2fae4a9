"""`summary.json`: a few numbers per run (state, times, best and final val accuracy, best val loss,
recent images/s, skipped updates, epochs done) that `ls` lists without reading event logs.

The training process that writes a run's events calls `RunSummary.update` after each epoch (its eval)
and at the end. Each update reads only the events appended since the last one (by byte offset) and
rewrites the file atomically; the running totals and the offset are kept in the file itself, so a
resumed run (a new process, the same log) carries on from where the last update stopped. The summary
is derived from `events.jsonl`, which stays the truth: a summary that cannot be read or written is
dropped or rebuilt, and never fails a run.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

from ..distributed.strategy import NullLog
from ..events import EventLog
from ..rundir import JSON_MAX_BYTES, atomic_write_json, is_int, open_regular, read_json
from ..runlist import SUMMARY_FIELDS, SUMMARY_FILE, SUMMARY_VERSION

RECENT_STEPS = 20  # images/s is the median of this many recent step events (a compile or a stall is not the rate)
_CHUNK = 4 << 20  # read size; an eval line with an inline confusion matrix (<= 256 classes) fits well inside


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


class RunSummary:
    """The summary of the run whose events are RUN_DIR/events.jsonl."""

    def __init__(self, run_dir: str):
        self.run_dir = run_dir
        self.path = os.path.join(run_dir, SUMMARY_FILE)
        self.events = os.path.join(run_dir, "events.jsonl")
        self._fresh()
        old = read_json(self.path, None, JSON_MAX_BYTES)
        if isinstance(old, dict) and old.get("v") == SUMMARY_VERSION and isinstance(old.get("tracking"), dict):
            self._restore(old)

    def _fresh(self) -> None:
        self.offset = 0
        self.skip_line = False  # inside a line longer than _CHUNK, passed over
        self.pub: dict[str, Any] = {k: None for k in SUMMARY_FIELDS}
        self.pub["skipped_updates"] = 0
        self.recent: list[float] = []
        self.closed_s = 0.0  # active time of earlier processes (a resumed run's)
        self.segment: list[float] | None = None  # [first t, last t] of this process's part

    def _restore(self, old: dict[str, Any]) -> None:
        tr = old["tracking"]
        if not is_int(tr.get("offset")) or tr["offset"] < 0:
            return
        self.offset = tr["offset"]
        for k in SUMMARY_FIELDS:
            v = old.get(k)
            self.pub[k] = v if (v is None or isinstance(v, (int, float, str))) and not isinstance(v, bool) else None
        self.pub["skipped_updates"] = self.pub["skipped_updates"] or 0
        self.recent = [float(x) for x in tr.get("recent", []) if _num(x) is not None][-RECENT_STEPS:]
        self.closed_s = _num(tr.get("closed_s")) or 0.0
        seg = tr.get("segment")
        if isinstance(seg, list) and len(seg) == 2 and all(_num(x) is not None for x in seg):
            self.segment = [float(seg[0]), float(seg[1])]

    def update(self, state: str | None = None) -> dict[str, Any] | None:
        """Take in the new events, write summary.json and return it; None if the log or the file
        could not be used (the run goes on: the summary is a convenience)."""
        try:
            self._take_new_events()
            if state is not None:
                self.pub["state"] = state
            self.pub["updated_at"] = round(time.time(), 3)
            doc = {"v": SUMMARY_VERSION, "run_id": os.path.basename(self.run_dir), **self.pub}
            doc["tracking"] = {
                "offset": self.offset,
                "recent": self.recent,
                "closed_s": self.closed_s,
                "segment": self.segment,
            }
            atomic_write_json(self.path, doc)
            return doc
        except (OSError, ValueError):
            return None

    def _take_new_events(self) -> None:
        try:
            fd = open_regular(self.events)
        except FileNotFoundError:
            return
        try:
            if os.fstat(fd).st_size < self.offset:  # the log was replaced: start over
                self._fresh()
            while True:
                data = os.pread(fd, _CHUNK, self.offset)
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) < _CHUNK:
                        return  # nothing, or a line still being written: the next update reads it
                    self.skip_line = True  # a line longer than _CHUNK: not one a summary needs
                    self.offset += len(data)
                    continue
                lines = data[:cut].split(b"\n")
                if self.skip_line:
                    lines, self.skip_line = lines[1:], False
                for line in lines:
                    self._take_line(line)
                self.offset += cut + 1
        finally:
            os.close(fd)

    def _take_line(self, line: bytes) -> None:
        # A cheap look before parsing: most lines are steps and device samples, which need parsing
        # only for their few numbers; other types are never needed.
        if not any(t in line for t in (b'"step"', b'"eval"', b'"epoch_end"', b'"run_started"', b'"run_finished"')):
            return
        try:
            ev = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(ev, dict):
            return
        self._take(ev)

    def _take(self, ev: dict[str, Any]) -> None:
        p = self.pub
        kind, t = ev.get("type"), _num(ev.get("t"))
        if kind == "run_started":
            if self.segment:  # an earlier process of this run: its active time is kept
                self.closed_s += self.segment[1] - self.segment[0]
            self.segment = [t, t] if t is not None else None
            p["started_at"] = p["started_at"] if p["started_at"] is not None else t
            p["ended_at"], p["state"] = None, "running"
            if is_int(ev.get("total_steps")):
                p["total_steps"] = ev["total_steps"]
        elif t is not None and self.segment:
            self.segment[1] = max(self.segment[1], t)
        if kind == "step":
            if is_int(ev.get("step")):
                p["steps_done"] = ev["step"]
            skipped = ev.get("skipped_updates")
            if is_int(skipped) and skipped >= 0:  # a sink's count over its steps
                p["skipped_updates"] += skipped
            elif ev.get("skipped") is True:
                p["skipped_updates"] += 1
            rate = _num(ev.get("img_per_s"))
            if rate is not None and rate > 0:
                self.recent = [*self.recent, rate][-RECENT_STEPS:]
                p["img_per_s"] = round(statistics.median(self.recent), 2)
        elif kind == "eval":
            acc, loss = _num(ev.get("val_acc")), _num(ev.get("val_loss"))
            if acc is not None:
                p["final_val_acc"] = acc
                if p["best_val_acc"] is None or acc > p["best_val_acc"]:
                    p["best_val_acc"], p["best_val_acc_epoch"] = acc, ev.get("epoch") if is_int(ev.get("epoch")) else None
            if loss is not None and (p["best_val_loss"] is None or loss < p["best_val_loss"]):
                p["best_val_loss"] = loss
        elif kind == "epoch_end" and is_int(ev.get("epoch")):
            p["epochs_done"] = max(p["epochs_done"] or 0, ev["epoch"])
        elif kind == "run_finished":
            p["ended_at"] = t
            if isinstance(ev.get("status"), str):
                p["state"] = ev["status"]
        if self.segment:
            p["duration_s"] = round(self.closed_s + self.segment[1] - self.segment[0], 3)


def summary_for(log: EventLog | NullLog, run_dir: str) -> RunSummary | None:
    """A summary for the process that writes the run's events (an EventLog, not a rank's NullLog)."""
    return RunSummary(run_dir) if isinstance(log, EventLog) else None
