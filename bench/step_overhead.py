"""Where a CPU step's time goes besides the compute: the Python loop, the step event's write, and
the host-to-device copy of a float32 batch against a uint8 one (the runner now feeds uint8 and
normalises in the graph). One process, resnet18 TransferNet at --image-size, batch --batch, the
runner's compiled step (amp.build_train_step, O0), ONEDNN_MAX_CPU_ISA=AVX2.

Prints each part's median per step and its ratio to the step's compute (baseline: the compiled
step on a batch already on the device, in the same run). Usage:
    .venv/bin/python bench/step_overhead.py [--steps 40] [--image-size 32] [--batch 16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before MindSpore loads (bench/onednn_isa.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runner"))


def timed(fn, n: int) -> float:
    """Median seconds of n calls."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--copy-size", type=int, default=224, help="image size of the host-copy comparison")
    ap.add_argument("--copy-batch", type=int, default=32, help="batch of the host-copy comparison")
    a = ap.parse_args()

    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from ascend_finetune.events import EventLog
    from ascend_finetune.models.amp import build_train_step
    from ascend_finetune.models.net import TransferNet
    from ascend_finetune.train.steps import normalized

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    ms.set_seed(0)
    net = TransferNet("resnet18", 4, 0)
    step = build_train_step(normalized(net), nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.0, 0.9), None)
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, (a.batch, 3, a.image_size, a.image_size), dtype=np.uint8)
    y = ms.Tensor(rng.integers(0, 4, a.batch).astype(np.int32))
    x_dev = ms.Tensor(raw)
    for _ in range(3):  # compile
        step(x_dev, y).asnumpy()
    n = a.steps * 50
    compute = timed(lambda: step(x_dev, y).asnumpy(), a.steps)
    # The host copy of one batch at a realistic size (--copy-size px, --copy-batch): a fresh host
    # array handed to a compiled graph that reads it (one element out, so the graph's own work is
    # nil), float32 as the old pipeline fed it against uint8 as it is fed now. Alternated call by call.
    big_u8 = rng.integers(0, 256, (a.copy_batch, 3, a.copy_size, a.copy_size), dtype=np.uint8)
    big_f32 = big_u8.astype(np.float32)

    @ms.jit
    def touch(x):
        return x[0, 0, 0, 0].astype(ms.float32)

    touch(ms.Tensor(big_f32)).asnumpy(), touch(ms.Tensor(big_u8)).asnumpy()
    t_f32, t_u8 = [], []
    for _ in range(a.steps):
        for arr, out in ((big_f32, t_f32), (big_u8, t_u8)):
            t = time.perf_counter()
            touch(ms.Tensor(arr.copy())).asnumpy()
            out.append(time.perf_counter() - t)
    copy_f32, copy_u8 = statistics.median(t_f32), statistics.median(t_u8)
    with tempfile.TemporaryDirectory() as d:
        log = EventLog(os.path.join(d, "events.jsonl"))
        fields = dict(epoch=1, step=1, loss=1.23, lr=0.01, loss_scale=None, overflow=False, skipped=False)
        event = timed(lambda: log.emit("step", **fields, step_ms=1.0, data_ms=0.1, img_per_s=10.0), n)
        log.close()

    def loop_body():  # epoch_steps' host work per step: unpack, bookkeeping, record (no step, no event)
        vals = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
        loss, finite, scale, updated, agreed, s, k, o, u = vals
        return {
            "loss": loss,
            "mean_loss": s / k,
            "overflow": finite < 0.5,
            "stop": agreed > 0.5,
            "t": time.perf_counter(),
        }

    loop = timed(loop_body, n)
    c = compute * 1000
    rows = [
        ("python loop (record)", loop * 1000),
        ("step event (json+write+flush)", event * 1000),
        (f"host copy, float32 batch ({big_f32.nbytes / 2**20:.1f} MiB)", copy_f32 * 1000),
        (f"host copy, uint8 batch ({big_u8.nbytes / 2**20:.1f} MiB)", copy_u8 * 1000),
    ]
    print(f"step compute (baseline): {c:.2f} ms (resnet18, {a.image_size} px, batch {a.batch}, median of {a.steps})")
    for name, ms_ in rows:
        print(f"  {name:32s} {ms_ * 1000:9.1f} us  ratio to compute {ms_ / c:.5f}")
    host = loop + event
    print(f"step_overhead: loop + event per step = {host * 1e6:.0f} us ({host * 1000 / c:.5f} of a {c:.1f} ms step)")
    print(
        f"step_overhead: host copy float32/uint8 = {copy_f32 / copy_u8:.2f} "
        f"({copy_f32 * 1000:.2f} vs {copy_u8 * 1000:.2f} ms for {a.copy_batch}x3x{a.copy_size}x{a.copy_size})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
