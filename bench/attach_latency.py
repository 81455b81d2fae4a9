"""How fast `attach` delivers an event: from the writer's flush to the reader's stdout.

A writer thread appends events with the runner's own EventLog (each carries its write time `t`);
two readers follow the same file at once: (a) GNU `tail -F`, which wakes on inotify, as the
baseline, and (b) `python -m ascend_finetune attach`, which polls every 20 ms. Prints the latency
percentiles of each and the ratio of (b)'s p99 to the protocol's 100 ms budget.

    .venv/bin/python bench/attach_latency.py [--events 300] [--interval-ms 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))

from ascend_finetune.events import EventLog  # noqa: E402
from ascend_finetune.rundir import initial_status  # noqa: E402


def reader(argv: list[str], n: int, out: dict[int, float], env: dict) -> subprocess.Popen:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, bufsize=0)

    def pump():
        for line in proc.stdout:
            now = time.time()
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("type") == "step":
                out[ev["seq"]] = now - ev["t"]
            if len(out) >= n:
                break

    threading.Thread(target=pump, daemon=True).start()
    return proc


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=300)
    ap.add_argument("--interval-ms", type=float, default=20)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        run_dir = os.path.join(d, "run")
        os.makedirs(run_dir)
        initial_status(run_dir, os.getpid())
        path = os.path.join(run_dir, "events.jsonl")
        open(path, "w").close()
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runner"))
        tail_lat: dict[int, float] = {}
        att_lat: dict[int, float] = {}
        tail = reader(["tail", "-n", "+1", "-F", path], a.events, tail_lat, env)
        att = reader([sys.executable, "-m", "ascend_finetune", "attach", run_dir], a.events, att_lat, env)
        time.sleep(1.5)  # both readers started and following
        log = EventLog(path)
        for i in range(a.events):
            log.emit("step", step=i + 1, loss=1.0)
            time.sleep(a.interval_ms / 1000)
        log.emit("run_finished", status="completed", error=None, best=None, final=None)
        log.close()
        deadline = time.time() + 10
        while (len(tail_lat) < a.events or len(att_lat) < a.events) and time.time() < deadline:
            time.sleep(0.05)
        tail.kill()
        att.wait(timeout=10)
    for name, lat in (("tail -F (baseline)", tail_lat), ("attach", att_lat)):
        v = list(lat.values())
        print(
            f"{name:20s} {len(v)} events  p50 {pct(v, 0.5):6.1f} ms  p95 {pct(v, 0.95):6.1f} ms  "
            f"p99 {pct(v, 0.99):6.1f} ms  max {max(v) * 1000:6.1f} ms"
        )
    v = list(att_lat.values())
    print(
        f"attach_latency: p99 {pct(v, 0.99):.1f} ms = {pct(v, 0.99) / 100:.2f} of the 100 ms budget; "
        f"p50 ratio attach/tail -F = {pct(v, 0.5) / max(pct(list(tail_lat.values()), 0.5), 0.01):.1f}"
    )


if __name__ == "__main__":
    main()
