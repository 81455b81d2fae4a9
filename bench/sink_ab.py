"""Loop against sink on the machine it runs on: two runs of the same epoch through
`Trainer.epoch_steps`, (a) sink.enabled false (the Python loop, a host batch per step) and (b)
sink.enabled true with sink.size N (on Ascend: `mindspore.data_sink`, N steps per call through the
device queue). Each run is its own process. Prints per-step medians (compile steps dropped) and one
line to paste into an issue. On CPU both arms loop (data_sink raises there): the line says so.

Usage: .venv/bin/python bench/sink_ab.py [--target Ascend] [--sink-size 8] [--steps 64] [--batch 32]
       [--image-size 224] [--backbone resnet50] [--data DIR]
bench/ascend_ab.sh wraps it for an NPU box.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "runner")

WORKER = """
import json, sys, time
from ascend_finetune.spec import resolve
from ascend_finetune.train.trainer import Trainer
spec, run_dir = json.loads(sys.argv[1]), sys.argv[2]
tr = Trainer(resolve(spec), run_dir, [])
out = []
for r in tr.epoch_steps(1, 0):
    out.append({k: r[k] for k in ("first_step", "step", "step_ms", "loss", "mean_loss")})
import mindspore as ms
print(json.dumps({"recs": out, "target": tr.target, "sinks": tr.sinks, "sink_size": tr.sink_size,
                  "mindspore": ms.__version__}))
"""


def run_arm(spec: dict, tmp: str, name: str) -> dict:
    run_dir = os.path.join(tmp, name)
    os.makedirs(run_dir)
    env = dict(os.environ, PYTHONPATH=RUNNER)
    env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    r = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(spec), run_dir],
        capture_output=True,
        text=True,
        env=env,
        cwd=run_dir,
        check=False,
    )
    if r.returncode:
        sys.stderr.write(r.stderr[-4000:])
        raise SystemExit(f"sink_ab: the {name} run failed")
    return json.loads(r.stdout.strip().splitlines()[-1])


def per_step(doc: dict, warm_steps: int) -> float:
    """Median ms per step over the records after the first warm_steps steps (compile)."""
    xs = [r["step_ms"] for r in doc["recs"] if r["first_step"] > warm_steps] or [r["step_ms"] for r in doc["recs"]]
    return statistics.median(xs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="auto")
    ap.add_argument("--sink-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=64, help="steps per arm (one epoch)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--backbone", default="resnet50")
    ap.add_argument("--workers", type=int, default=0, help="data.workers (0: the cores per rank)")
    ap.add_argument("--data", help="an ImageFolder with at least steps x batch images (default: generated shapes)")
    a = ap.parse_args()
    sys.path.insert(0, RUNNER)
    with tempfile.TemporaryDirectory(prefix="sink-ab-") as tmp:
        data = a.data
        if not data:
            from ascend_finetune.data.demo import make_shapes

            data = os.path.join(tmp, "shapes")
            make_shapes(data, per_class=-(-a.steps * a.batch // 4), size=max(64, a.image_size), seed=0)
        base = {
            "name": "ab",
            "data": {"train": data, "image_size": a.image_size, "batch_size": a.batch, "workers": a.workers},
            "model": {"backbone": a.backbone, "pretrained": None, "freeze": "none"},
            "train": {"epochs": 1, "lr": 0.01},
            "amp": {"level": "O0", "loss_scale": "none"},
            "device": {"target": a.target},
            "checkpoint": {"every_steps": 10**9},
        }
        base["data"]["val_split"] = 0
        loop = run_arm({**base, "sink": {"enabled": False, "size": 1}}, tmp, "loop")
        sink = run_arm({**base, "sink": {"enabled": True, "size": a.sink_size}}, tmp, "sink")
    warm = max(3, a.sink_size)
    la, sb = per_step(loop, warm), per_step(sink, warm)
    print(f"loop: {len(loop['recs'])} records, median {la:.2f} ms/step (after step {warm})")
    print(f"sink: {len(sink['recs'])} records, median {sb:.2f} ms/step (after step {warm})")
    where = "" if sink["sinks"] else " [no sink on this target: both arms loop]"
    print(
        f"ascend_ab: mindspore {sink['mindspore']} target {sink['target']} {a.backbone} "
        f"{a.image_size}px batch {a.batch}: "
        f"loop {la:.2f} ms/step, sink size {sink['sink_size']} {sb:.2f} ms/step, ratio sink/loop = {sb / la:.3f}{where}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
