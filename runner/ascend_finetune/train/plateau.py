"""The `plateau` learning-rate schedule (`train.lr_schedule: plateau`), PyTorch's ReduceLROnPlateau
in `abs` threshold mode: after `patience` epochs without an improvement larger than `min_delta`,
the rate times `factor`, not below `min_lr`; the wait then starts again.

It cannot be precomputed, so it rewrites the optimizer's per-update rates from the current update
on: MindSpore keeps a Tensor schedule as a Parameter (`learning_rate`, and `learning_rate_group_N`
for parameter groups) that the compiled step indexes by `global_step`, so writing it between epochs
reaches the next step without recompiling (`apply`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .early_stop import Watch


class Plateau:
    STATE_ENTRY = "knobs.plateau"

    def __init__(self, cfg: dict[str, Any], base_lr: float):
        self.factor, self.patience, self.min_lr = float(cfg["factor"]), int(cfg["patience"]), float(cfg["min_lr"])
        self.watch = Watch(cfg["metric"], cfg["min_delta"])
        self.scale = 1.0  # the current rate over the spec's `lr`
        self.base = float(base_lr)

    def after_eval(self, value: float | None, epoch: int) -> tuple[float, float] | None:
        """Record the epoch's metric; (old lr, new lr) when the rate is lowered now (the caller then
        `apply`s the ratio), else None."""
        self.watch.observe(value, epoch)
        if self.watch.bad <= self.patience:
            return None
        old = self.base * self.scale
        new = max(self.min_lr, old * self.factor)
        self.watch.bad = 0  # PyTorch: the wait restarts after a reduction
        if new >= old:
            return None  # at min_lr already
        self.scale = new / self.base
        return old, new

    def state(self) -> np.ndarray:
        return np.concatenate([[self.scale], self.watch.state()])

    def load(self, state: np.ndarray) -> None:
        s = np.asarray(state, np.float64).reshape(-1)
        self.scale = float(s[0])
        self.watch.load(s[1:])


def apply(optimizer: Any, lrs: list[float], applied: int, ratio: float) -> None:
    """The rates of update `applied` on (0-based) times `ratio`, in `lrs` (the events' copy) and in
    every learning-rate Parameter of `optimizer` (the compiled step's), parameter groups alike (a
    group's rates keep their ratio to the base rate). `ops.assign` writes into the Parameter's own
    buffer: `set_data` swaps in a new tensor that an already compiled step does not see (MindSpore
    2.10 on CPU; test_knobs checks the update size)."""
    import mindspore as ms
    from mindspore import ops

    for i in range(applied, len(lrs)):
        lrs[i] *= ratio
    for p in optimizer.get_parameters():
        if p.name.startswith("learning_rate") and len(p.shape) == 1:
            v = p.asnumpy().astype(np.float64)
            v[applied:] *= ratio
            ops.assign(p, ms.Tensor(v.astype(np.float32)))
