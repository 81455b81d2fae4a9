"""Frozen-backbone fine-tune with and without the feature cache: epoch time and final accuracy.

Set-up (all generated here): task A (4 coloured shapes) trains a resnet18 from scratch: that is the
"pretrained" backbone. Task B (3 other colours) is then a linear probe on it (`freeze: backbone`),
run twice with the same spec and epochs:
(a) baseline: `train.cache_features: false`, the backbone runs on every image every epoch;
(b) cached:   `train.cache_features: true` (+ `cache_views`), the backbone runs once.
Prints per-epoch times, the ratio of mean epoch time after the first epoch (a/b; target >= 5x), the
cache's one-off compute time, and the final val accuracy of both (target: within 1 point).

Usage: .venv/bin/python bench/feature_cache.py [--epochs 5] [--per-class 80] [--views 1] [--augment 0|1]
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
TASK_B = {
    "magenta circle": ("circle", (200, 40, 200)),
    "cyan square": ("square", (40, 200, 200)),
    "white triangle": ("triangle", (235, 235, 235)),
}


def train(work: str, spec: dict) -> list[dict]:
    path = os.path.join(work, f"{spec['name']}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    run_dir = os.path.join(work, "runs", spec["name"])
    subprocess.run(
        [sys.executable, "-m", "ascend_finetune", "train", path, "--run-dir", run_dir],
        check=True,
        env=dict(os.environ, PYTHONPATH=RUNNER),
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(run_dir, "events.jsonl"), encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--per-class", type=int, default=80)
    ap.add_argument("--views", type=int, default=1)
    ap.add_argument("--augment", type=int, default=0)
    a = ap.parse_args()
    sys.path.insert(0, RUNNER)
    from ascend_finetune.data.demo import make_shapes

    with tempfile.TemporaryDirectory(prefix="aft-bench-fc-") as work:
        data_a, data_b = os.path.join(work, "a"), os.path.join(work, "b")
        make_shapes(data_a, per_class=48, size=32, seed=1)
        make_shapes(data_b, per_class=a.per_class, size=32, seed=2, classes=TASK_B)
        base = {
            "data": {"image_size": 32, "batch_size": 16, "workers": 2},
            "amp": {"level": "O0"},
            "checkpoint": {"every_steps": 100000, "keep_max": 2},
            "device": {"target": "CPU"},
        }
        print("training the backbone on task A ...", flush=True)
        evs = train(
            work,
            {
                **base,
                "name": "task-a",
                "data": {**base["data"], "train": data_a},
                "model": {"backbone": "resnet18"},
                "train": {"epochs": 4},
            },
        )
        best = next(e for e in evs if e["type"] == "run_finished")["best"]["file"]
        pretrained = os.path.join(work, "runs", "task-a", best)
        results = {}
        for kind, cache in (("a", False), ("b", True)):
            s = {
                **base,
                "name": f"probe-{kind}",
                "data": {
                    **base["data"],
                    "train": data_b,
                    "val_split": 0.25,
                    "augment": "basic" if a.augment else "none",
                },
                "model": {"backbone": "resnet18", "pretrained": pretrained, "freeze": "backbone"},
                "train": {
                    "epochs": a.epochs,
                    "optimizer": "adamw",
                    "lr": 2e-4,
                    "cache_features": cache,
                    "cache_views": a.views,
                },
            }
            evs = train(work, s)
            epochs = [e for e in evs if e["type"] == "epoch_end"]
            acc = [e for e in evs if e["type"] == "eval"][-1]["val_acc"]
            fc = epochs[0].get("feature_cache")
            results[kind] = (epochs, acc, fc)
            print(
                f"({kind}) cache {'on ' if cache else 'off'}: epoch s "
                + ", ".join(f"{e['epoch_s']:.2f}" for e in epochs)
                + f"; final val acc {acc:.4f}"
                + (f"; cache built in {fc['compute_s']} s" if fc else ""),
                flush=True,
            )
        later_a = statistics.mean(e["epoch_s"] for e in results["a"][0][1:])
        later_b = statistics.mean(e["epoch_s"] for e in results["b"][0][1:])
        print(
            f"mean epoch time after the first: (a) {later_a:.3f} s, (b) {later_b:.3f} s; "
            f"ratio a/b = {later_a / later_b:.1f}x"
        )
        print(
            f"final val accuracy: (a) {results['a'][1]:.4f}, (b) {results['b'][1]:.4f}; "
            f"difference {100 * (results['b'][1] - results['a'][1]):+.2f} points "
            f"(augment {'on' if a.augment else 'off'}, views {a.views})"
        )


if __name__ == "__main__":
    main()
