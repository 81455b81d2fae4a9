"""One rank of test_finite_flag.py, started by msrun: the runner's TrainStep on a tiny Dense network,
with a non-finite gradient injected into this rank's overflow check only (what a device's own
overflow status shows in saturation mode), then two steps. Writes what it saw to OUT/rank-N.json.

argv: OUT MODE, MODE "agree" (the runner's step) or "local" (agree() bypassed: the step before the fix).
"""

from __future__ import annotations

import json
import os
import sys

import mindspore as ms
import numpy as np
from mindspore import amp, nn, ops
from mindspore.communication import get_rank, init
from mindspore.context import ParallelMode

from ascend_finetune.models.amp import TrainStep

out_dir, mode = sys.argv[1], sys.argv[2]
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
init()
ms.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
rank = get_rank()
ms.set_seed(1)


class Injected(TrainStep):
    """Rank 1's first step sees an infinite gradient in its local check, as its device would."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.poison = ms.Parameter(
            ms.Tensor(np.inf if rank == 1 else 1.0, ms.float32), name="poison", requires_grad=False
        )

    def local_finite(self, grads):
        grads = (grads[0] * self.poison,) + tuple(grads[1:])
        return amp.all_finite(grads)


class Local(Injected):
    def agree(self, finite):
        return finite


net = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")
opt = nn.SGD(net.trainable_params(), 0.1)
scaler = amp.DynamicLossScaler(1024.0, 2, 1000)
step = (Injected if mode == "agree" else Local)(net, nn.CrossEntropyLoss(), opt, scaler, distributed=True)
step.set_train(True)
rng = np.random.default_rng(rank)
seen = []
for _ in range(2):
    x = ms.Tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 2, 8).astype(np.int32))
    loss, finite, scale, updated = step(x, y).asnumpy().tolist()[:4]  # then the correct count
    seen.append({"finite": finite, "updated": updated, "scale": scale})
    ops.assign(step.poison, ms.Tensor(1.0, ms.float32))  # only the first step overflows
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, f"rank-{rank}.json"), "w") as f:
    json.dump({"steps": seen, "weight": net.weight.asnumpy().tolist()}, f)
