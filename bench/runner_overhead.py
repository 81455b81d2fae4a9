"""Step-time overhead of the runner against the reference recipe's `Model.train`: same net, data, steps.

(a) baseline: MindSpore `Model(net, loss_fn, optimizer)` + `model.train(1, dataset,
    callbacks=[LossMonitor(1), <timer>], dataset_sink_mode=True)`, as reference/reference-recipe.txt
    does it; per-step wall time from perf_counter at on_train_step_end.
(b) runner:   `python -m ascend_finetune train SPEC --run-dir DIR` with full telemetry; per-step
    `step_ms` from RUN_DIR/events.jsonl.

Both: `ascend_finetune.models.net.TransferNet` (freeze none), images from `data.demo.make_shapes` through
`data.pipeline.make_dataset` (augment on, same seed, so the same batches and the same initial weights: the
losses match step for step at O0), Momentum(lr 0.01, 0.9), ONEDNN_MAX_CPU_ISA=AVX2, one process per
run, runs alternated a, b, a, b, ... The first --warmup steps of every run (compile) are dropped; the
statistics pool the remaining steps of all runs of a kind.

--breakdown instead times, in one process and interleaved step by step, the pieces of the runner's
compiled step (amp.build_train_step) against TrainOneStepCell, to locate an overhead.

Usage: .venv/bin/python bench/runner_overhead.py [--steps 40] [--repeats 2] [--amp O0,O2] [--breakdown]
"""

from __future__ import annotations

import argparse
import json
import math
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
    core = xs[k : len(xs) - k] or xs
    return sum(core) / len(core)


def summary(xs: list[float]) -> tuple[float, float]:
    return statistics.median(xs), mid80_mean(xs)


# ---- (a) the baseline, in its own process -------------------------------------------------------
def baseline_worker(cfg: dict) -> None:
    # ONEDNN_MAX_CPU_ISA comes from the parent's environment, so it is set before MindSpore loads.
    import mindspore as ms
    from mindspore import nn
    from mindspore.train import Callback, LossMonitor, Model
    from mindspore.train.loss_scale_manager import FixedLossScaleManager

    from ascend_finetune.data.folder import scan, stratified_split
    from ascend_finetune.data.pipeline import make_dataset
    from ascend_finetune.models.net import TransferNet, apply_freeze, set_train_mode

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU", 0)
    ms.set_seed(SEED)
    workers = max(1, min(cfg["workers"], os.cpu_count() or 1))  # as Trainer does
    image_set = scan(cfg["data"], workers)
    samples, _ = stratified_split(image_set.samples, 0.0, SEED)
    net = TransferNet(cfg["backbone"], len(image_set.classes), 0)
    apply_freeze(net)
    set_train_mode(net, True)
    loss_fn = nn.CrossEntropyLoss(reduction="mean")  # the runner's loss (train.py), not the recipe's
    # With a fixed loss scale that does not drop overflowing updates, MindSpore leaves unscaling the
    # gradients to the optimizer: its loss_scale must equal the manager's.
    scale = 1.0 if cfg["amp"] == "O0" else cfg["scale"]
    optimizer = nn.Momentum(net.trainable_params(), LR, MOMENTUM, weight_decay=0.0, loss_scale=scale)
    if cfg["amp"] == "O0":
        model = Model(net, loss_fn=loss_fn, optimizer=optimizer)
    else:
        model = Model(
            net,
            loss_fn=loss_fn,
            optimizer=optimizer,
            amp_level=cfg["amp"],
            loss_scale_manager=FixedLossScaleManager(cfg["scale"], drop_overflow_update=False),
        )
    # After the net, as in the runner: make_dataset seeds the dataset module, which also moves the
    # seed of weight initialisation. The runner builds epoch e's pipeline with seed train.seed + e.
    dataset = make_dataset(samples, cfg["image_size"], cfg["batch"], workers, True, True, SEED + 1, drop_remainder=True)

    class StepTimer(Callback):
        def __init__(self):
            self.t0, self.ends, self.losses = None, [], []

        def on_train_step_begin(self, run_context):
            if self.t0 is None:
                self.t0 = time.perf_counter()

        def on_train_step_end(self, run_context):
            self.ends.append(time.perf_counter())
            out = run_context.original_args().net_outputs  # LossMonitor has already read it
            self.losses.append(float((out[0] if isinstance(out, (tuple, list)) else out).asnumpy()))

    timer = StepTimer()
    model.train(1, dataset, callbacks=[LossMonitor(1), timer], dataset_sink_mode=cfg["sink"])
    marks = [timer.t0] + timer.ends
    print(
        "BENCH_RESULT "
        + json.dumps({"step_ms": [(b - a) * 1000 for a, b in zip(marks, marks[1:])], "loss": timer.losses}),
        flush=True,
    )


# ---- the two kinds of run, as subprocesses ------------------------------------------------------
def child_env() -> dict:
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", GLOG_v="3", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = RUNNER + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_worker(mode: str, cfg: dict, log: str) -> dict:
    with open(log, "w") as f:
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), mode, json.dumps(cfg)],
            stdout=subprocess.PIPE,
            stderr=f,
            text=True,
            env=child_env(),
            timeout=cfg["timeout"],
        )
        f.write(p.stdout)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("BENCH_RESULT ")]
    if p.returncode != 0 or not lines:
        raise SystemExit(f"{mode[2:]} worker failed (exit {p.returncode}); see {log}")
    return json.loads(lines[-1].split(" ", 1)[1])


def run_baseline(cfg: dict, logdir: str, idx: int) -> dict:
    return run_worker("--_baseline", cfg, os.path.join(logdir, f"baseline-{cfg['amp']}-{idx}.log"))


def runner_spec(cfg: dict) -> dict:
    amp = (
        {"level": "O0", "loss_scale": "none"}
        if cfg["amp"] == "O0"
        else {"level": cfg["amp"], "loss_scale": "fixed", "init_scale": cfg["scale"]}
    )
    return {
        "name": "bench",
        "data": {
            "train": cfg["data"],
            "val_split": 0.0,
            "image_size": cfg["image_size"],
            "batch_size": cfg["batch"],
            "workers": cfg["workers"],
            "augment": "basic",
        },
        "model": {"backbone": cfg["backbone"], "pretrained": None, "freeze": "none"},
        "train": {
            "epochs": 1,
            "optimizer": "momentum",
            "lr": LR,
            "momentum": MOMENTUM,
            "weight_decay": 0.0,
            "lr_schedule": "constant",
            "warmup_steps": 0,
            "seed": SEED,
        },
        "amp": amp,
        "sink": {"enabled": cfg["sink"]},
        # val_split 0: no eval. One epoch and no mid-epoch checkpoint: the one checkpoint the runner
        # always writes at an epoch's end comes after the last timed step.
        "checkpoint": {"every_steps": 10**9, "keep_max": 1, "keep_best": False},
        "device": {"target": "CPU", "ids": [0]},
    }


def run_runner(cfg: dict, logdir: str, idx: int) -> dict:
    run_dir = os.path.join(logdir, f"runner-{cfg['amp']}-{idx}")
    spec_path = run_dir + ".spec.json"
    with open(spec_path, "w") as f:
        json.dump(runner_spec(cfg), f)
    with open(run_dir + ".log", "w") as f:
        p = subprocess.run(
            [sys.executable, "-m", "ascend_finetune", "train", spec_path, "--run-dir", run_dir],
            stdout=f,
            stderr=subprocess.STDOUT,
            env=child_env(),
            timeout=cfg["timeout"],
        )
    steps, losses, overflows = [], [], 0
    with open(os.path.join(run_dir, "events.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if e["type"] == "step":
                steps.append(e["step_ms"])
                losses.append(e["loss"])
                overflows += bool(e["overflow"]) or bool(e.get("skipped"))
            elif e["type"] == "run_finished" and e["status"] != "completed":
                raise SystemExit(f"runner run failed: {e['error']}; see {run_dir}")
    if p.returncode != 0 or len(steps) != cfg["steps"]:
        raise SystemExit(f"runner run failed (exit {p.returncode}, {len(steps)} steps); see {run_dir}")
    if overflows:
        print(f"  note: {overflows} of the runner's steps overflowed or skipped their update", flush=True)
    return {"step_ms": steps, "loss": losses}


def compare(cfg: dict, repeats: int, warmup: int, logdir: str) -> tuple[float, float]:
    kinds: dict[str, list[float]] = {"a": [], "b": []}
    loss_diff = 0.0
    for i in range(repeats):
        for kind, fn in (("a", run_baseline), ("b", run_runner)):
            t0 = time.perf_counter()
            res = fn(cfg, logdir, i)
            if kind == "a":
                ref_loss = res["loss"]
            else:  # same init, same batches: the two must compute the same thing
                loss_diff = max(
                    [loss_diff] + [abs(p - q) if p is not None else math.inf for p, q in zip(res["loss"], ref_loss)]
                )
            ms_ = res["step_ms"][warmup:]
            kinds[kind].extend(ms_)
            med, m80 = summary(ms_)
            name = "a baseline Model.train" if kind == "a" else "b runner train        "
            print(
                f"  {cfg['amp']} run {i + 1} {name}: median {med:7.1f} ms, mid-80% mean {m80:7.1f} ms "
                f"({len(ms_)} steps timed, {time.perf_counter() - t0:5.1f} s wall)",
                flush=True,
            )
    (ma, a80), (mb, b80) = summary(kinds["a"]), summary(kinds["b"])
    tag = "" if cfg["amp"] == "O0" else f" [{cfg['amp']}, fixed loss scale {cfg['scale']:g}]"
    print(
        f"runner_overhead: ratio b/a = {mb / ma:.2f} (median step a {ma:.1f} ms, b {mb:.1f} ms; "
        f"mid-80% mean a {a80:.1f} ms, b {b80:.1f} ms, ratio {b80 / a80:.2f}; "
        f"{repeats}x2 runs, {cfg['steps']} steps each, first {warmup} dropped){tag}",
        flush=True,
    )
    print(f"  same computation check: max |loss a - loss b| over all steps = {loss_diff:.2g}", flush=True)
    return ma, mb


# ---- host-side work of the runner's step loop, without MindSpore ---------------------------------
def host_loop_cost(n: int = 2000) -> float:
    """Microseconds per step of what Run._train does around the compiled step: the step event
    (json + write + flush), the control-inbox poll (one stat) and the bookkeeping."""
    from ascend_finetune.control import ControlInbox
    from ascend_finetune.events import EventLog

    with tempfile.TemporaryDirectory() as d:
        log, inbox = EventLog(os.path.join(d, "events.jsonl")), ControlInbox(d)
        t0 = time.perf_counter()
        for s in range(1, n + 1):
            loss, finite, _scale, updated = [0.5 + s * 1e-6, 1.0, 1.0, 1.0]
            log.emit(
                "step",
                epoch=1,
                step=s,
                loss=loss,
                lr=0.01,
                loss_scale=None,
                overflow=finite < 0.5,
                skipped=updated < 0.5,
                step_ms=round(123.456789, 3),
                data_ms=round(0.4321, 3),
                img_per_s=round(16 / 0.123, 2),
            )
            math.isfinite(loss)
            for _ in inbox.poll():
                pass
            _ = s % 10**9 == 0
        dt = time.perf_counter() - t0
        log.close()
    return dt / n * 1e6


# ---- --breakdown: the runner's compiled step taken apart, in one process ------------------------
def breakdown_worker(cfg: dict) -> None:
    import mindspore as ms
    import numpy as np
    from mindspore import amp, nn, ops

    from ascend_finetune import amp as ampmod
    from ascend_finetune.models.net import TransferNet

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU", 0)
    ms.set_seed(SEED)
    net = TransferNet(cfg["backbone"], 4, 0)
    net.set_train(True)
    loss_fn = nn.CrossEntropyLoss(reduction="mean")
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM, weight_decay=0.0)
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((cfg["batch"], 3, cfg["image_size"], cfg["image_size"]), dtype=np.float32))
    y = ms.Tensor(rng.integers(0, 4, cfg["batch"]).astype(np.int32))

    def forward(x, y):  # as amp.build_train_step's, without a scaler
        loss = loss_fn(net(x).astype(ms.float32), y)
        return loss, loss

    grad_fn = ms.value_and_grad(forward, None, opt.parameters, has_aux=True)

    def no_check(x, y):
        (_, loss), grads = grad_fn(x, y)
        return ops.depend(loss, opt(grads))

    def sum_finite(grads):  # one reduction per gradient, then one isfinite on a scalar
        return ops.isfinite(ops.addn([g.sum() for g in grads]))

    def all_finite(grads):
        return amp.all_finite(grads)

    def check_no_gate(x, y):  # amp.all_finite computed and returned, the update always applied
        (_, loss), grads = grad_fn(x, y)
        finite = amp.all_finite(grads)
        loss = ops.depend(loss, opt(grads))
        return ops.stack([loss, finite.astype(ms.float32)])

    def gate_on_loss(x, y):  # update under `if`, on the loss alone
        (_, loss), grads = grad_fn(x, y)
        update = ops.isfinite(loss)
        if update:
            loss = ops.depend(loss, opt(grads))
        return ops.stack([loss, update.astype(ms.float32)])

    def gate_on_sum(x, y):  # the runner's step with sum_finite in place of amp.all_finite
        (_, loss), grads = grad_fn(x, y)
        finite = sum_finite(grads)
        update = ops.logical_and(finite, ops.isfinite(loss))
        if update:
            loss = ops.depend(loss, opt(grads))
        return ops.stack([loss, finite.astype(ms.float32), ops.ones((), ms.float32), update.astype(ms.float32)])

    class AsCell(nn.Cell):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def construct(self, *args):
            return self.fn(*args)

    one_step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    one_step.set_train()
    runner_step = ampmod.build_train_step(net, loss_fn, opt, None)
    steps = {
        "TrainOneStepCell (Model.train at O0)": (one_step, (x, y)),
        "runner amp.build_train_step (ms.jit)": (runner_step, (x, y)),
        "  its body in an nn.Cell": (AsCell(runner_step.__wrapped__), (x, y)),
        "  no check, no gate, nn.Cell": (AsCell(no_check), (x, y)),
        "  no check, no gate, ms.jit": (ms.jit(no_check), (x, y)),
        "  all_finite, no gate, nn.Cell": (AsCell(check_no_gate), (x, y)),
        "  gate on isfinite(loss), nn.Cell": (AsCell(gate_on_loss), (x, y)),
        "  gate on sum-isfinite(grads), nn.Cell": (AsCell(gate_on_sum), (x, y)),
    }
    grads = tuple(ms.Tensor(rng.standard_normal(p.shape, dtype=np.float32)) for p in net.trainable_params())
    steps["amp.all_finite(grads) alone"] = (AsCell(all_finite), (grads,))
    steps["isfinite(addn(g.sum() ...)) alone"] = (AsCell(sum_finite), (grads,))
    names = list(steps)
    times: dict[str, list[float]] = {n: [] for n in names}
    for i in range(cfg["steps"]):
        for n in names if i % 2 == 0 else names[::-1]:  # interleaved, order flipped each round
            fn, args = steps[n]
            t0 = time.perf_counter()
            fn(*args).asnumpy()
            times[n].append((time.perf_counter() - t0) * 1000)
    w = cfg["warmup"]
    out = {
        n: {"median": statistics.median(times[n][w:]), "mid80": mid80_mean(times[n][w:]), "first": times[n][0]}
        for n in names
    }
    print("BENCH_RESULT " + json.dumps(out), flush=True)


def breakdown(cfg: dict, logdir: str) -> None:
    print(
        f"runner_overhead --breakdown: {cfg['backbone']}, {cfg['image_size']} px, batch {cfg['batch']}, "
        "fixed random batch, "
        f"{cfg['steps']} calls each interleaved, first {cfg['warmup']} dropped",
        flush=True,
    )
    res = run_worker("--_breakdown", cfg, os.path.join(logdir, "breakdown.log"))
    ref = res["TrainOneStepCell (Model.train at O0)"]["median"]
    for name, r in res.items():
        rel = f"  x{r['median'] / ref:4.2f}" if "alone" not in name else ""
        print(f"  {name:42s} median {r['median']:7.1f} ms, mid-80% mean {r['mid80']:7.1f} ms{rel}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40, help="train steps per run (default 40)")
    ap.add_argument("--warmup", type=int, default=5, help="leading steps of each run not timed (compile; default 5)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each kind, alternated (default 2)")
    ap.add_argument("--amp", default="O0,O2", help="comma-separated levels to compare (default O0,O2)")
    ap.add_argument("--scale", type=float, default=1024.0, help="fixed loss scale for O2 (default 1024)")
    ap.add_argument("--backbone", default="resnet18")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2, help="data.workers for both (default 2)")
    ap.add_argument(
        "--sink",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="dataset_sink_mode / sink.enabled (default on, as the recipe; CPU trains without sinking)",
    )
    ap.add_argument("--breakdown", action="store_true", help="time the pieces of the runner's step instead")
    ap.add_argument("--keep", metavar="DIR", help="keep data, logs and run dirs in DIR (default: a temp dir, removed)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run before giving up")
    ap.add_argument("--_baseline", help=argparse.SUPPRESS)
    ap.add_argument("--_breakdown", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._baseline or a._breakdown:
        (baseline_worker if a._baseline else breakdown_worker)(json.loads(a._baseline or a._breakdown))
        return 0
    if a.steps < a.warmup + 3:
        ap.error("--steps must exceed --warmup by at least 3")
    sys.path.insert(0, RUNNER)
    tmp = tempfile.TemporaryDirectory(prefix="bench-overhead-")
    work = os.path.abspath(a.keep) if a.keep else tmp.name
    os.makedirs(work, exist_ok=True)
    base = {
        "backbone": a.backbone,
        "image_size": a.image_size,
        "batch": a.batch,
        "workers": a.workers,
        "steps": a.steps,
        "warmup": a.warmup,
        "sink": a.sink,
        "scale": a.scale,
        "timeout": a.timeout,
    }
    if a.breakdown:
        breakdown(base, work)
        return 0

    from ascend_finetune.data.demo import CLASSES, make_shapes  # Pillow only; this process never loads MindSpore

    per_class, rem = divmod(a.steps * a.batch, len(CLASSES))
    if rem:
        ap.error(f"--steps x --batch must be a multiple of the class count ({len(CLASSES)})")
    data = make_shapes(os.path.join(work, "data"), per_class=per_class, size=48, seed=0)["train"]
    print(
        f"runner_overhead: {a.backbone}, {a.image_size} px, batch {a.batch}, {per_class * len(CLASSES)} images = "
        f"{a.steps} steps/run, freeze none, Momentum, ONEDNN_MAX_CPU_ISA=AVX2, sink {a.sink}, "
        f"{os.cpu_count()} CPUs; work dir {work}",
        flush=True,
    )
    medians = {}
    for level in [s.strip() for s in a.amp.split(",") if s.strip()]:
        medians[level] = compare({**base, "data": data, "amp": level}, a.repeats, a.warmup, work)
    us = host_loop_cost()
    mb = next(iter(medians.values()))[1]
    print(
        f"runner_overhead: host-side loop work per step (step event json+write+flush, control poll) = {us:.0f} us "
        f"({us / 10 / mb:.3f}% of a {mb:.0f} ms step)",
        flush=True,
    )
    if not a.keep:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
