"""Step time and images/s per backbone family on this machine's CPU, at 224 and 64 px, and what the
feature cache saves on each.

For the runner's resnet18 and the smallest offered mindcv model of each family (runner/ascend_finetune/
backbones.json), in GRAPH mode, batch --batch, random images:
- full: a train step of TransferNet with `freeze: none` (every layer trains);
- frozen: the same with `freeze: backbone` (a linear probe without the cache: the backbone still runs
  forward on every image, every step);
- cached: the step the feature cache leaves (train.cache_features): the head alone on stored features,
  plus the one-off backbone forward per image (`extract`, ms per batch).
Each time is the median of --steps steps after one compiling step. `cache x` is frozen / cached step
time in the same run; `cache x/5ep` counts the one-off extraction over 5 epochs:
5 * frozen / (extract + 5 * cached).

Usage: .venv/bin/python bench/backbones.py [--sizes 224,64] [--batch 8] [--steps 3] [--only convnext,vit]
(--only: families, each by its smallest model, or model names such as vit_b_32_224)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))


def models(only: set[str] | None) -> list[str]:
    from ascend_finetune.models import backbones as bb

    best: dict[str, tuple[int, str]] = {}
    for name, e in bb.mindcv_models().items():
        if e["family"] not in best or e["params"] < best[e["family"]][0]:
            best[e["family"]] = (e["params"], name)
    names = ["resnet18"] + sorted(n for _, n in best.values())
    if not only:
        return names
    # --only takes families (their smallest model) or model names (vit_b_32_224: the CI's ViT).
    named = sorted(n for n in bb.mindcv_models() if n in only and n not in names)
    return [n for n in names if bb.family(n) in only or n in only] + named


def timed(fn, steps: int) -> float:
    """Median ms of `steps` calls after one (compiling) call."""
    fn()
    out = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


def measure(name: str, size: int, batch: int, steps: int) -> dict[str, float]:
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    from ascend_finetune.models.net import BackboneFeatures, TransferNet, apply_freeze, frozen_parts, set_train_mode

    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.random((batch, 3, size, size), np.float32))
    y = ms.Tensor(rng.integers(0, 4, batch).astype(np.int32))
    out: dict[str, float] = {}
    for freeze in ("none", "backbone"):
        net = TransferNet(name, 4, frozen_parts(freeze, name))
        apply_freeze(net)
        step = nn.TrainOneStepCell(
            nn.WithLossCell(net, nn.CrossEntropyLoss()), nn.Momentum(net.trainable_params(), 0.01, 0.9)
        )
        step.set_train(True)
        set_train_mode(net, True)
        out["full" if freeze == "none" else "frozen"] = timed(lambda s=step: s(x, y).asnumpy(), steps)
    features = BackboneFeatures(net)
    features.set_train(False)
    out["extract"] = timed(lambda: features(x).asnumpy(), steps)
    f = features(x)
    head_step = nn.TrainOneStepCell(
        nn.WithLossCell(net.head, nn.CrossEntropyLoss()), nn.Momentum(net.head.trainable_params(), 0.01, 0.9)
    )
    head_step.set_train(True)
    out["cached"] = timed(lambda: head_step(f, y).asnumpy(), max(steps, 20))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="224,64")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--only", help="comma-separated families or model names")
    a = ap.parse_args()
    import mindspore as ms

    from ascend_finetune.models import backbones as bb

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    names = models(set(a.only.split(",")) if a.only else None)
    print(f"CPU, GRAPH mode, batch {a.batch}, median of {a.steps} steps after one compiling step; ms per step")
    cols = ("px", 4), ("full ms", 9), ("img/s", 7), ("frozen ms", 10), ("img/s", 7), ("extract", 8), ("cached", 7)
    print(f"{'backbone':24s} " + " ".join(f"{c:>{w}s}" for c, w in cols) + f" {'cache x':>8s} {'x/5ep':>6s}")
    sizes = [int(s) for s in a.sizes.split(",")]
    for size in sizes:
        for name in names:
            fixed = bb.fixed_image_size(name)
            if fixed and fixed != size:  # ViT: its own input size only (backbones.json image_size)
                where = f"see its {fixed} px row" if fixed in sizes else f"not measured: add {fixed} to --sizes"
                print(f"{name:24s} {size:4d}  takes {fixed} px images only: {where}", flush=True)
                continue
            try:
                r = measure(name, size, a.batch, a.steps)
            except Exception as e:  # one family's failure must not lose the other rows
                print(f"{name:24s} {size:4d}  failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}", flush=True)
                continue
            ratio, full_ips, frozen_ips = (
                r["frozen"] / r["cached"],
                a.batch * 1000 / r["full"],
                a.batch * 1000 / r["frozen"],
            )
            epochs5 = 5 * r["frozen"] / (r["extract"] + 5 * r["cached"])
            print(
                f"{name:24s} {size:4d} {r['full']:9.1f} {full_ips:7.1f} {r['frozen']:10.1f} "
                f"{frozen_ips:7.1f} {r['extract']:8.1f} {r['cached']:7.2f} {ratio:8.0f} {epochs5:6.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
