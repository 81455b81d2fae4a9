"""Does NPU telemetry slow training? Step time with the `npu-smi` sampler on vs off, same spec.

(a) baseline: `python -m ascend_finetune train` with no `npu-smi` on the PATH (no sampler thread).
(b) telemetry: the same, with a fake `npu-smi` first on the PATH that is deliberately slow (it
    sleeps --smi-sleep seconds, then prints a recorded 8-NPU 910B table) and a sampling interval of
    --interval seconds: far more often than the default 2 s, to make any cost visible.

Runs alternate a, b, a, b, ... in fresh processes; the first --warmup steps of each (graph compile)
are dropped and the rest pooled. Prints the median and mid-80% mean step time of each and the ratio
b/a (target: within noise of 1.00), and how many `device` events (b) wrote.

Usage: .venv/bin/python bench/telemetry_overhead.py [--epochs 3] [--repeats 2] [--interval 0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "runner")
FIXTURE = os.path.join(ROOT, "test", "runner", "fixtures", "npu-smi", "info_910b3_8npu_processes.txt")


def mid80_mean(xs: list[float]) -> float:
    xs = sorted(xs)
    k = int(len(xs) * 0.1)
    core = xs[k : len(xs) - k] or xs
    return sum(core) / len(core)


def fake_npu_smi(folder: str, sleep_s: float) -> str:
    table = os.path.join(folder, "table.txt")
    with open(FIXTURE, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)[1:]  # drop the fixture's "# source:" line
    with open(table, "w", encoding="utf-8") as f:
        f.writelines(lines)
    bindir = os.path.join(folder, "bin")
    os.makedirs(bindir)
    exe = os.path.join(bindir, "npu-smi")
    with open(exe, "w") as f:
        f.write(f'#!/bin/sh\nsleep {sleep_s}\ncat "{table}"\n')
    os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
    return bindir


def run(
    work: str, data: str, tag: str, epochs: int, interval: float, path_prefix: str | None
) -> tuple[list[float], int]:
    spec = {
        "name": tag,
        "data": {"train": data, "image_size": 32, "batch_size": 16, "workers": 1},
        "model": {"backbone": "resnet18", "pretrained": None},
        "train": {"epochs": epochs},
        "amp": {"level": "O0"},
        "checkpoint": {"every_steps": 100000, "keep_max": 1},
        "device": {"target": "CPU", "ids": [0], "telemetry_s": interval},
    }
    spec_path = os.path.join(work, f"{tag}.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ, PYTHONPATH=RUNNER)
    if path_prefix:
        env["PATH"] = path_prefix + os.pathsep + env["PATH"]
    run_dir = os.path.join(work, tag)
    subprocess.run(
        [sys.executable, "-m", "ascend_finetune", "train", spec_path, "--run-dir", run_dir],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(run_dir, "events.jsonl"), encoding="utf-8") as f:
        evs = [json.loads(ln) for ln in f if ln.strip()]
    steps = [e["step_ms"] for e in evs if e["type"] == "step"]
    return steps, sum(1 for e in evs if e["type"] == "device")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("--smi-sleep", type=float, default=0.3)
    a = ap.parse_args()
    sys.path.insert(0, RUNNER)
    from ascend_finetune.data.demo import make_shapes

    with tempfile.TemporaryDirectory(prefix="aft-bench-telemetry-") as work:
        data = os.path.join(work, "data")
        make_shapes(data, per_class=48, size=32, seed=1)
        bindir = fake_npu_smi(work, a.smi_sleep)
        pooled: dict[str, list[float]] = {"a": [], "b": []}
        samples = 0
        for i in range(a.repeats):
            for kind in ("a", "b"):
                steps, n_dev = run(work, data, f"{kind}{i}", a.epochs, a.interval, bindir if kind == "b" else None)
                pooled[kind] += steps[a.warmup :]
                if kind == "b":
                    samples += n_dev
                print(
                    f"  run {kind}{i}: {len(steps)} steps, median {statistics.median(steps[a.warmup :]):.1f} ms"
                    + (f", {n_dev} device events" if kind == "b" else ""),
                    flush=True,
                )
        ma, mb = statistics.median(pooled["a"]), statistics.median(pooled["b"])
        print(
            f"(a) no telemetry:         median {ma:.1f} ms, mid-80% mean {mid80_mean(pooled['a']):.1f} ms, "
            f"{len(pooled['a'])} steps"
        )
        print(
            f"(b) npu-smi every {a.interval:g} s: median {mb:.1f} ms, mid-80% mean {mid80_mean(pooled['b']):.1f} ms, "
            f"{len(pooled['b'])} steps, {samples} device events (npu-smi sleeps {a.smi_sleep:g} s per call)"
        )
        print(
            f"ratio b/a (median): {mb / ma:.3f}   "
            f"(mid-80% mean): {mid80_mean(pooled['b']) / mid80_mean(pooled['a']):.3f}"
        )


if __name__ == "__main__":
    main()
