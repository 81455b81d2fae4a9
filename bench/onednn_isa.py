"""MindSpore CPU train-step time with oneDNN capped at AVX2 (ONEDNN_MAX_CPU_ISA=AVX2, the runner's
default) against oneDNN's own choice (the variable unset: AVX-512 on a CPU that has it).

Each measurement runs in its own process, because oneDNN reads the variable once, when MindSpore loads.
The step is `nn.TrainOneStepCell(nn.WithLossCell(TransferNet, CrossEntropyLoss), Momentum)` in
GRAPH_MODE on a fixed random batch; the first --warmup steps (compile) are not timed. Runs alternate
AVX2, default, AVX2, default, ... Before that, a tiny conv train step under ONEDNN_VERBOSE=1 shows the
ISA oneDNN reports and the convolution implementations it picks in each setting.

Usage: .venv/bin/python bench/onednn_isa.py [--repeats 2] [--steps-avx2 25] [--steps-default 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "runner")


def _context():
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU", 0)
    ms.set_seed(1)
    return ms


def step_worker(cfg: dict) -> None:
    import numpy as np

    ms = _context()
    from mindspore import nn

    from ascend_finetune.models.net import TransferNet

    net = TransferNet(cfg["backbone"], 4, 0)
    step = nn.TrainOneStepCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.Momentum(net.trainable_params(), 0.01, 0.9)
    )
    step.set_train()
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((cfg["batch"], 3, cfg["image_size"], cfg["image_size"]), dtype=np.float32))
    y = ms.Tensor(rng.integers(0, 4, cfg["batch"]).astype(np.int32))
    times = []
    for _ in range(cfg["warmup"] + cfg["steps"]):
        t0 = time.perf_counter()
        step(x, y).asnumpy()
        times.append((time.perf_counter() - t0) * 1000)
    print("BENCH_RESULT " + json.dumps({"step_ms": times[cfg["warmup"] :], "first_ms": times[0]}), flush=True)


def probe_worker(_cfg: dict) -> None:
    """A tiny conv net's forward and backward, for oneDNN's verbose lines."""
    import numpy as np

    ms = _context()
    from mindspore import nn, ops

    class Tiny(nn.Cell):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(3, 8, 3), nn.Conv2d(8, 16, 3)

        def construct(self, x):
            return ops.mean(self.c2(ops.relu(self.c1(x))))

    net = Tiny()
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.01))
    step.set_train()
    step(ms.Tensor(np.ones((2, 3, 16, 16), np.float32))).asnumpy()
    print("BENCH_RESULT {}", flush=True)


def env_for(isa: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_VERBOSE")}
    env.update(GLOG_v="3", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = RUNNER + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    return env


def run_worker(mode: str, cfg: dict, env: dict, timeout: int) -> tuple[dict, str]:
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), mode, json.dumps(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        timeout=timeout,
    )
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("BENCH_RESULT ")]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-4000:])
        raise SystemExit(f"onednn_isa: {mode[2:]} worker failed (exit {p.returncode})")
    return json.loads(lines[-1].split(" ", 1)[1]), p.stdout


def probe(isa: str | None, timeout: int) -> str:
    _, out = run_worker("--_probe", {}, {**env_for(isa), "ONEDNN_VERBOSE": "1"}, timeout)
    isa_line = next(
        (ln.split("isa:", 1)[1] for ln in out.splitlines() if "onednn_verbose" in ln and ",isa:" in ln), "?"
    )
    impls: dict[str, set] = {}
    for ln in out.splitlines():
        f = ln.split(",")
        if ln.startswith("onednn_verbose") and "primitive" in f and "exec" in f and "convolution" in f:
            i = f.index("convolution")
            kind = {
                "forward_training": "fwd",
                "forward_inference": "fwd",
                "backward_data": "bwd_data",
                "backward_weights": "bwd_weights",
            }.get(f[i + 2], f[i + 2])
            impls.setdefault(kind, set()).add(f[i + 1])
    conv = "; ".join(f"{k} {'/'.join(sorted(v))}" for k, v in sorted(impls.items())) or "no conv lines"
    return f"isa:{isa_line} | conv impl: {conv}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=2, help="runs of each setting, alternated (default 2)")
    ap.add_argument("--steps-avx2", type=int, default=25, help="timed steps per AVX2 run (default 25)")
    ap.add_argument("--steps-default", type=int, default=8, help="timed steps per default-ISA run (default 8; slow)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed leading steps per run (default 2)")
    ap.add_argument("--backbone", default="resnet18")
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run before giving up")
    ap.add_argument("--_step", help=argparse.SUPPRESS)
    ap.add_argument("--_probe", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._step or a._probe:
        (step_worker if a._step else probe_worker)(json.loads(a._step or a._probe))
        return 0

    print(
        f"onednn_isa: {a.backbone}, {a.image_size} px, batch {a.batch}, TrainOneStepCell O0, GRAPH_MODE, "
        f"{os.cpu_count()} CPUs; ONEDNN_MAX_CPU_ISA in this shell: {os.environ.get('ONEDNN_MAX_CPU_ISA', 'unset')} "
        "(ignored: each run sets its own)",
        flush=True,
    )
    settings = [("AVX2", "AVX2", a.steps_avx2), ("default", None, a.steps_default)]
    for name, isa, _ in settings:
        print(f"  oneDNN {name:7s}: {probe(isa, a.timeout)}", flush=True)
    pooled: dict[str, list[float]] = {name: [] for name, _, _ in settings}
    for i in range(a.repeats):
        for name, isa, steps in settings:
            cfg = {
                "backbone": a.backbone,
                "image_size": a.image_size,
                "batch": a.batch,
                "steps": steps,
                "warmup": a.warmup,
            }
            t0 = time.perf_counter()
            res, _ = run_worker("--_step", cfg, env_for(isa), a.timeout)
            pooled[name].extend(res["step_ms"])
            print(
                f"  run {i + 1} {name:7s}: median {statistics.median(res['step_ms']):8.1f} ms "
                f"(min {min(res['step_ms']):.1f}, {steps} steps timed; first step {res['first_ms']:.0f} ms; "
                f"{time.perf_counter() - t0:.1f} s wall)",
                flush=True,
            )
    m_avx2, m_def = statistics.median(pooled["AVX2"]), statistics.median(pooled["default"])
    print(
        f"onednn_isa: ratio default/AVX2 = {m_def / m_avx2:.1f} (median step default {m_def:.1f} ms, "
        f"AVX2 {m_avx2:.1f} ms; {a.repeats}x2 runs)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
