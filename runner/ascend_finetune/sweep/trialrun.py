"""One trial's run: started with the runner's own `launch` (the same code path as a user's launch,
detached, in its own session), then followed through its events.jsonl (events.Tail: bounded reads of
a regular file) for its `eval` values and its end.

The objective is computed from the eval events the scheduler read, so the value told to Optuna is
the one the pruner saw epoch by epoch.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from ..events import SkippedLine, Tail, is_event
from ..meta import update_meta
from ..rundir import atomic_write_json, effective_state, status_path

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class LaunchFailed(Exception):
    pass


def launch(spec_path: str, root: str, run_id: str, env_add: dict[str, str]) -> dict[str, Any]:
    """`python -m ascend_finetune launch SPEC --runs-root ROOT --run-id ID`: {run_id, run_dir, pid}."""
    env = dict(os.environ, **env_add)
    env["PYTHONPATH"] = PKG_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    argv = [sys.executable, "-m", "ascend_finetune", "launch", spec_path, "--runs-root", root, "--run-id", run_id]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    try:
        doc = json.loads(lines[-1]) if lines else {}
    except ValueError:
        doc = {}
    if r.returncode != 0 or not isinstance(doc, dict) or "run_dir" not in doc:
        err = doc.get("error") if isinstance(doc, dict) else None
        msg = err.get("message") if isinstance(err, dict) else (r.stderr.strip()[-500:] or f"exit {r.returncode}")
        raise LaunchFailed(f"launch failed: {msg}")
    return doc


def link(run_dir: str, sweep_id: str, sweep_dir: str, number: int, params: dict[str, Any]) -> None:
    """Tags and the sweep.json link that group a trial's run under its sweep in `ls` and the editor."""
    atomic_write_json(
        os.path.join(run_dir, "sweep.json"),
        {"sweep_id": sweep_id, "sweep_dir": sweep_dir, "trial": number, "params": params},
    )
    update_meta(run_dir, add_tags=[f"sweep:{sweep_id}", f"trial:{number}"])


@dataclass
class TrialRun:
    number: int
    run_id: str
    run_dir: str
    slot: int | None
    params: dict[str, Any]
    metric_field: str  # val_acc or val_loss
    epochs: int  # the trial's train.epochs: a pruning after the last eval would come too late
    reported: dict[int, float] = field(default_factory=dict)  # epoch -> value, as told to Optuna
    pruned_at: int | None = None
    evals: list[tuple[int, float]] = field(default_factory=list)  # every eval's (epoch, value) in the log
    finished: dict[str, Any] | None = None  # the run_finished event
    lost: bool = False
    stop_sent: float = 0.0  # time.monotonic() of the last stop request
    launch_deadline: float | None = None  # a resumed trial whose run may still be starting: lost after this
    _tail: Tail | None = None

    def poll(self) -> list[tuple[int, float]]:
        """New (epoch, value) evals since the last poll; sets `finished` (or `lost`) at the run's end."""
        if self._tail is None:
            self._tail = Tail(os.path.join(self.run_dir, "events.jsonl"))
        new = self._read()
        if self.finished is None and os.path.isfile(status_path(self.run_dir)):
            if effective_state(self.run_dir) != "running":
                new += self._read()  # anything written just before the end
                if self.finished is None:
                    self.lost = True
        return new

    def _read(self) -> list[tuple[int, float]]:
        assert self._tail is not None
        new = []
        for line in self._tail.poll():
            if isinstance(line, SkippedLine):
                continue
            try:
                ev = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not is_event(ev):
                continue
            if ev.get("type") == "run_started" and not ev.get("resumed_from"):
                self.evals.clear()
            elif ev.get("type") == "eval" and isinstance(ev.get("epoch"), int):
                v = ev.get(self.metric_field)
                # null is a NaN or Inf loss (events.sanitize): the worst value there is
                value = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
                self.evals.append((ev["epoch"], value))
                new.append((ev["epoch"], value))
            elif ev.get("type") == "run_finished":
                self.finished = ev
        return new

    @property
    def done(self) -> bool:
        return self.finished is not None or self.lost

    def objective(self, metric: str) -> float | None:
        """The trial's value, or None when it has no finite eval value."""
        vals = [v for _, v in self.evals if math.isfinite(v)]
        if not vals:
            return None
        if metric == "best_val_acc":
            return max(vals)
        if metric == "best_val_loss":
            return min(vals)
        last = self.evals[-1][1]
        return last if math.isfinite(last) else None

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()
            self._tail = None
