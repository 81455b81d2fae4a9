"""The sweep scheduler's overhead per trial: a sweep of N trials one at a time, against the same N run
specs started directly with `launch` one after another (each waited for before the next).

(a) direct: `python -m ascend_finetune launch SPEC --runs-root ROOT`, then poll its status.json (every
    50 ms) until it is no longer running; the specs are the sweep's own trial specs (sweep_dir/trials/),
    so both sides train exactly the same runs.
(b) sweep:  `python -m ascend_finetune sweep SPEC --root ROOT` in the foreground (concurrency 1, no
    pruner, random sampler with a fixed seed), from start to exit.

Printed: the wall time of each side, the ratio b/a, the overhead per trial ((b - a) / N), and the
scheduler's gap per trial: from a run's end (its status.json ended_at) to the scheduler's next
trial_started event (the time to notice the end, tell Optuna, ask, validate, launch and tag).

Usage: .venv/bin/python bench/sweep_overhead.py [--trials 3] [--epochs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runner"))


def cli(*args: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "ascend_finetune", *args], capture_output=True, text=True, env=ENV)
    if r.returncode:
        raise SystemExit(f"{args[0]} failed: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def state(run_dir: str) -> str:
    try:
        with open(os.path.join(run_dir, "status.json")) as f:
            return json.load(f).get("state") or "running"
    except (OSError, ValueError):
        return "running"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sweep-bench-")
    data = os.path.join(work, "data")
    cli("make-demo-data", data, "--per-class", "40", "--size", "32")
    sweep = {
        "base": {
            "name": "b",
            "data": {"train": data, "image_size": 32, "batch_size": 8, "workers": 1, "val_split": 0.25},
            "model": {"backbone": "resnet18", "pretrained": None},
            "train": {"epochs": a.epochs},
            "amp": {"level": "O0", "loss_scale": "none"},
            "device": {"target": "CPU", "telemetry_s": 0},
        },
        "space": {"train.lr": {"low": 0.01, "high": 0.1, "log": True}},
        "trials": a.trials,
        "sampler": "random",
        "seed": 0,
        "pruner": {"kind": "none"},
        "concurrency": 1,
    }
    spec = os.path.join(work, "s.json")
    with open(spec, "w") as f:
        json.dump(sweep, f)

    t0 = time.perf_counter()
    done = cli("sweep", spec, "--root", os.path.join(work, "sweep-runs"))
    b = time.perf_counter() - t0
    assert done["counts"]["complete"] == a.trials, done["counts"]

    specs = [os.path.join(done["sweep_dir"], "trials", f"t{t['number']}.json") for t in done["trials"]]
    t0 = time.perf_counter()
    for s in specs:
        run_dir = cli("launch", s, "--runs-root", os.path.join(work, "direct-runs"))["run_dir"]
        while state(run_dir) == "running":
            time.sleep(0.05)
    a_s = time.perf_counter() - t0

    with open(os.path.join(done["sweep_dir"], "events.jsonl")) as f:
        evs = [json.loads(line) for line in f]
    starts = {e["number"]: e["t"] for e in evs if e["type"] == "trial_started"}
    gaps = []
    for t in done["trials"]:
        with open(os.path.join(t["run_dir"], "status.json")) as f:
            ended = json.load(f)["ended_at"]
        if t["number"] + 1 in starts:
            gaps.append(starts[t["number"] + 1] - ended)
    print(
        f"sweep_overhead: ratio b/a = {b / a_s:.3f} (direct a {a_s:.1f} s, sweep b {b:.1f} s, {a.trials} trials of "
        f"{a.epochs} epoch(s)); overhead per trial (b - a) / N = {(b - a_s) / a.trials:.2f} s"
    )
    if gaps:
        print(
            "sweep_overhead: scheduler gap from a run's end to the next trial's start: "
            f"median {statistics.median(gaps):.2f} s "
            f"(min {min(gaps):.2f}, max {max(gaps):.2f}); the sweep's own start (validate, study, first launch) is in b"
        )


if __name__ == "__main__":
    main()
