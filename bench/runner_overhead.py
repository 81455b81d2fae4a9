"""Step-time overhead of the runner against the reference recipe's `Model.train`, same net/data/steps.

(a) baseline: MindSpore `Model(net, loss_fn, optimizer)` + `model.train(1, dataset,
    callbacks=[LossMonitor(1), <timer>], dataset_sink_mode=...)`, as reference/reference-recipe.txt does it.
(b) runner:   `python -m ascend_finetune train SPEC --run-dir DIR`, per-step `step_ms` from events.jsonl.

Both use `ascend_finetune.model.TransferNet`, data from `demo_data.make_shapes` fed through
`data.make_dataset`, Momentum, the same seed and step count, ONEDNN_MAX_CPU_ISA=AVX2, each in its own
process, alternated a, b, a, b, ... Compile is excluded: the first --warmup steps of every run are
dropped; the statistics are over the remaining steps of all runs of a kind, pooled.

Usage: .venv/bin/python bench/runner_overhead.py [--steps 40] [--repeats 2] [--amp O0,O2] ...
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
RUNNER = os.path.join(ROOT, "runner")
LR, MOMENTUM, SEED = 0.01, 0.9, 1


# ---- statistics ---------------------------------------------------------------------------------
def mid80_mean(xs: list[float]) -> float:
    xs = sorted(xs)
    k = int(len(xs) * 0.1)
    core = xs[k:len(xs) - k] or xs
    return sum(core) / len(core)


def summary(xs: list[float]) -> tuple[float, float]:
    return statistics.median(xs), mid80_mean(xs)


# ---- (a) the baseline, run in its own process --------------------------------------------------
def baseline_worker(cfg: dict) -> None:
    # ONEDNN_MAX_CPU_ISA comes from the parent's environment, set before this process imports MindSpore.
    sys.path.insert(0, RUNNER)
    import mindspore as ms
    from mindspore import nn
    from mindspore.train import Callback, LossMonitor, Model
    from mindspore.train.loss_scale_manager import FixedLossScaleManager

    from ascend_finetune.data import make_dataset, scan, stratified_split
    from ascend_finetune.model import TransferNet, apply_freeze, set_train_mode

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU", 0)
    ms.set_seed(SEED)
    workers = max(1, min(cfg["workers"], os.cpu_count() or 1))  # as Trainer does
    image_set = scan(cfg["data"], workers)
    samples, _ = stratified_split(image_set.samples, 0.0, SEED)
    # the runner builds epoch e's pipeline with seed train.seed + e
    dataset = make_dataset(samples, cfg["image_size"], cfg["batch"], workers, True, True, SEED + 1, drop_remainder=True)
    net = TransferNet(cfg["backbone"], len(image_set.classes), 0)
    apply_freeze(net)
    set_train_mode(net, True)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), LR, MOMENTUM, weight_decay=0.0)
    if cfg["amp"] == "O0":
        model = Model(net, loss_fn=loss_fn, optimizer=optimizer)
    else:
        model = Model(net, loss_fn=loss_fn, optimizer=optimizer, amp_level=cfg["amp"],
                      loss_scale_manager=FixedLossScaleManager(1024, drop_overflow_update=False))

    class StepTimer(Callback):
        def __init__(self):
            self.ends: list[float] = []
            self.t0 = None

        def on_train_step_begin(self, run_context):
            if self.t0 is None:
                self.t0 = time.perf_counter()

        def on_train_step_end(self, run_context):
            self.ends.append(time.perf_counter())

    timer = StepTimer()
    model.train(1, dataset, callbacks=[LossMonitor(1), timer], dataset_sink_mode=cfg["sink"])
    marks = [timer.t0] + timer.ends
    step_ms = [(b - a) * 1000 for a, b in zip(marks, marks[1:])]
    print("BENCH_RESULT " + json.dumps({"step_ms": step_ms}), flush=True)


# ---- the two kinds of run, as subprocesses ------------------------------------------------------
def child_env() -> dict:
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", GLOG_v="3", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = RUNNER + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_baseline(cfg: dict, logdir: str, idx: int) -> list[float]:
    log = os.path.join(logdir, f"baseline-{cfg['amp']}-{idx}.log")
    with open(log, "w") as f:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--_baseline", json.dumps(cfg)],
                           stdout=subprocess.PIPE, stderr=f, text=True, env=child_env(), timeout=cfg["timeout"])
        f.write(p.stdout)
    lines = [l for l in p.stdout.splitlines() if l.startswith("BENCH_RESULT ")]
    if p.returncode != 0 or not lines:
        raise SystemExit(f"baseline run failed (exit {p.returncode}); see {log}")
    return json.loads(lines[-1].split(" ", 1)[1])["step_ms"]


def run_runner(cfg: dict, logdir: str, idx: int) -> list[float]:
    amp = {"level": "O0", "loss_scale": "none"} if cfg["amp"] == "O0" else \
          {"level": cfg["amp"], "loss_scale": "fixed", "init_scale": 1024}
    spec = {
        "name": "bench",
        "data": {"train": cfg["data"], "val_split": 0.0, "image_size": cfg["image_size"], "batch_size": cfg["batch"],
                 "workers": cfg["workers"], "augment": True},
        "model": {"backbone": cfg["backbone"], "pretrained": None, "freeze": "none"},
        "train": {"epochs": 1, "optimizer": "momentum", "lr": LR, "momentum": MOMENTUM, "weight_decay": 0.0,
                  "lr_schedule": "constant", "warmup_steps": 0, "seed": SEED},
        "amp": amp,
        "sink": {"enabled": cfg["sink"]},
        # no mid-epoch checkpoint; the one at the end of the (single) epoch comes after the last step
        "checkpoint": {"every_steps": 10**9, "keep_max": 1, "keep_best": False},
        "device": {"target": "CPU", "ids": [0]},
    }
    run_dir = os.path.join(logdir, f"runner-{cfg['amp']}-{idx}")
    spec_path = run_dir + ".spec.json"
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    with open(run_dir + ".log", "w") as f:
        p = subprocess.run([sys.executable, "-m", "ascend_finetune", "train", spec_path, "--run-dir", run_dir],
                           stdout=f, stderr=subprocess.STDOUT, env=child_env(), timeout=cfg["timeout"])
    steps = []
    with open(os.path.join(run_dir, "events.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e["type"] == "step":
                steps.append(e["step_ms"])
            elif e["type"] == "run_finished" and e["status"] != "completed":
                raise SystemExit(f"runner run failed: {e['error']}; see {run_dir}")
    if p.returncode != 0 or len(steps) != cfg["steps"]:
        raise SystemExit(f"runner run failed (exit {p.returncode}, {len(steps)} steps); see {run_dir}")
    return steps


def compare(cfg: dict, repeats: int, warmup: int, logdir: str) -> float:
    kinds = {"a": [], "b": []}
    for i in range(repeats):
        for kind, fn in (("a", run_baseline), ("b", run_runner)):
            t0 = time.perf_counter()
            ms_ = fn(cfg, logdir, i)[warmup:]
            kinds[kind].extend(ms_)
            med, m80 = summary(ms_)
            name = "a baseline Model.train" if kind == "a" else "b runner train       "
            print(f"  {cfg['amp']} run {i + 1} {name}: median {med:7.1f} ms, mid-80% mean {m80:7.1f} ms "
                  f"({len(ms_)} steps timed, {time.perf_counter() - t0:5.1f} s wall)", flush=True)
    (ma, a80), (mb, b80) = summary(kinds["a"]), summary(kinds["b"])
    ratio = mb / ma
    tag = "" if cfg["amp"] == "O0" else f" [{cfg['amp']}, fixed loss scale 1024]"
    print(f"runner_overhead: ratio b/a = {ratio:.2f} (median step a {ma:.1f} ms, b {mb:.1f} ms; "
          f"mid-80% mean a {a80:.1f} ms, b {b80:.1f} ms, ratio {b80 / a80:.2f}; "
          f"{repeats}x{repeats} runs, {cfg['steps']} steps each, first {warmup} dropped){tag}", flush=True)
    return ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40, help="train steps per run (default 40)")
    ap.add_argument("--warmup", type=int, default=5, help="leading steps of each run not timed (compile; default 5)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each kind, alternated (default 2)")
    ap.add_argument("--amp", default="O0", help="comma-separated levels to compare: O0 and/or O2 (default O0)")
    ap.add_argument("--backbone", default="resnet18")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2, help="data.workers for both (default 2)")
    ap.add_argument("--sink", action="store_true", help="dataset_sink_mode=True / sink.enabled (CPU ignores both)")
    ap.add_argument("--keep", metavar="DIR", help="keep data, logs and run dirs in DIR (default: a temp dir, removed)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run before giving up")
    ap.add_argument("--_baseline", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._baseline:
        baseline_worker(json.loads(a._baseline))
        return 0
    if a.steps <= a.warmup + 2:
        ap.error("--steps must exceed --warmup by at least 3")
    sys.path.insert(0, RUNNER)
    from ascend_finetune.demo_data import CLASSES, make_shapes  # Pillow only; no MindSpore in this process

    tmp = tempfile.TemporaryDirectory(prefix="bench-overhead-")
    work = os.path.abspath(a.keep) if a.keep else tmp.name
    os.makedirs(work, exist_ok=True)
    per_class = -(-a.steps * a.batch // len(CLASSES))
    n = per_class * len(CLASSES)
    if n // a.batch != a.steps:  # exactly --steps batches in one epoch
        ap.error("--steps x --batch must be a multiple of the class count (4)")
    data = make_shapes(os.path.join(work, "data"), per_class=per_class, size=48, seed=0)["train"]
    print(f"runner_overhead: {a.backbone}, {a.image_size} px, batch {a.batch}, {n} images, {a.steps} steps/run, "
          f"freeze none, Momentum, ONEDNN_MAX_CPU_ISA=AVX2, sink {a.sink}, {os.cpu_count()} CPUs; work dir {work}",
          flush=True)
    for level in [s.strip() for s in a.amp.split(",") if s.strip()]:
        cfg = {"data": data, "backbone": a.backbone, "image_size": a.image_size, "batch": a.batch,
               "workers": a.workers, "steps": a.steps, "amp": level, "sink": a.sink, "timeout": a.timeout}
        compare(cfg, a.repeats, a.warmup, work)
    if not a.keep:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
