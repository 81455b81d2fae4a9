"""The step loop's building blocks, apart from the trainer that owns them: the data-wait monitor, the
sink (MindSpore's `data_sink`, Ascend only; `host_sink` stands in for it in CPU tests), the network
behind on-device normalisation, and the compiled step cell that keeps what a sink would otherwise hide."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..data.pipeline import device_normalize
from ..distributed.strategy import StepStop

# The pipeline bounds the run when the step waits for its batch more than this share of the step
# (median over DATA_WAIT_WINDOW steps, after DATA_WAIT_WARMUP steps of compile and queue fill).
DATA_WAIT_SHARE = 0.25
DATA_WAIT_WARMUP = 3
DATA_WAIT_WINDOW = 8


class DataWaitMonitor:
    """Watches each step's data wait (`data_ms`) against its time (`step_ms`) and gives one
    `data_bound` warning, once per run, when the input pipeline rather than the device sets the pace."""

    def __init__(self, workers: int, image_size: int, cached: bool, share: float = DATA_WAIT_SHARE):
        self.workers, self.image_size, self.cached, self.share = workers, image_size, cached, share
        self.seen: list[tuple[float, float]] = []
        self.warned = False

    def observe(self, step_ms: float, data_ms: float) -> dict[str, Any] | None:
        if self.warned:
            return None
        self.seen.append((step_ms, data_ms))
        recent = self.seen[DATA_WAIT_WARMUP:][-DATA_WAIT_WINDOW:]
        if len(recent) < DATA_WAIT_WINDOW:
            return None
        step = float(np.median([a for a, _ in recent]))
        wait = float(np.median([b for _, b in recent]))
        if step <= 0 or wait / step <= self.share:
            return None
        self.warned = True
        fixes = [f"raise data.workers (now {self.workers} per rank)", "feed smaller images (resize the data set once)"]
        if not self.cached:
            fixes.append("with a frozen backbone, set train.cache_features to true")
        return {
            "code": "data_bound",
            "message": f"the input pipeline bounds this run: each step waits {wait:.0f} ms of {step:.0f} ms "
            f"({wait / step:.0%}) for its batch, so the device idles; " + ", or ".join(fixes),
            "details": {
                "data_ms": round(wait, 3),
                "step_ms": round(step, 3),
                "share": round(wait / step, 3),
                "workers": self.workers,
                "image_size": self.image_size,
                "cache_features": self.cached,  # whether the message left out the feature-cache fix
            },
        }


def build_sink(step: Any, dataset: Any, size: int, data_sink: Callable[..., Any] | None = None) -> Callable[[], Any]:
    """Ascend (and GPU) only: `step` fed through the device queue, `size` steps per call, the loop
    over them run by MindSpore (the graph scheduler's loop-count actor, `GetLoopCount`, in
    kernel-by-kernel mode; the whole graph under GE), the batches prefetched to the device. Each call
    returns the last step's outputs. `mindspore.data_sink` raises on CPU; `data_sink` is for tests."""
    import mindspore as ms

    sink = data_sink or ms.data_sink
    # A JitConfig compiles the sink function as one graph (without it, data_sink runs it step by step
    # in PyNative). jit_level is left to MindSpore: O0 (kernel by kernel) on 910B, whole graph on 910A.
    return sink(step, dataset, sink_size=size, jit_config=ms.JitConfig())


# Test-only: "1" makes a CPU run take the sink path with `host_sink` standing in for the device
# queue (test/runner/train/test_sink_run.py), since CPU has none.
HOST_SINK_ENV = "ASCEND_FINETUNE_TEST_HOST_SINK"


def host_sink(fn: Any, dataset: Any, sink_size: int, jit_config: Any = None) -> Callable[[], Any]:
    """`mindspore.data_sink`'s calls without its device queue, for CPU tests of the sink path: CPU
    has no queue kernel (data_sink raises "Data sinking supports ascend or gpu", and its
    `InitDataSetQueue` has no CPU kernel). As data_sink does in kernel-by-kernel mode
    (mindspore/train/data_sink.py, `sink_process`: `for _ in range(loop): out = real_sink_fun()`),
    each call runs `fn` `sink_size` times and returns the last outputs; the batches come from the
    host iterator instead of GetNext."""
    batches = dataset.create_tuple_iterator(num_epochs=1)

    def call() -> Any:
        out = None
        for _ in range(sink_size):
            out = fn(*next(batches))
        return out

    return call


def _normalized_cell(mean: Any, std: Any) -> Any:
    from mindspore import nn

    class Normalized(nn.Cell):
        """The network behind DeviceNormalize: uint8 NCHW in, the host pipeline's float32 inside.
        No prefix, so the network's parameter names (and checkpoints) stay as they were."""

        def __init__(self, net: Any) -> None:
            super().__init__(auto_prefix=False)
            self.normalize = device_normalize(mean, std)
            self.net = net

        def construct(self, x: Any) -> Any:
            return self.net(self.normalize(x))

    return Normalized


def normalized(net: Any, mean: Any, std: Any) -> Any:
    """`net` behind DeviceNormalize with the weights' mean and std (0..255 units; the Cell class is
    built on first use: MindSpore loads late)."""
    return _normalized_cell(mean, std)(net)


def run_step_cell(core: Any, stop: StepStop | None) -> Any:
    """The loop's step: the train step plus, in the graph, what a sink would otherwise hide: the sum
    of the finite losses, their count, the overflows, the updates and the correct predictions since
    `reset()` (Parameters that accumulate across a sink's steps), and the ranks' agreed stop. Returns
    [loss, finite, scale, updated, stop_agreed, loss_sum, finite_count, overflows, updates,
    correct_sum, correct] (the last: this step's own count)."""
    import mindspore as ms
    from mindspore import Parameter, nn, ops

    class RunStep(nn.Cell):
        def __init__(self) -> None:
            super().__init__(auto_prefix=False)
            self.step = core
            self.stop = stop.cell if stop is not None else None
            self.acc = Parameter(ms.Tensor(np.zeros(5, np.float32)), name="run_step_acc", requires_grad=False)

        def construct(self, x: Any, y: Any) -> Any:
            out = self.step(x, y)
            loss, finite, updated, correct = out[0], out[1], out[3], out[4]
            ok = ops.isfinite(loss)
            zero = ops.zeros_like(loss)
            inc = ops.stack([ops.select(ok, loss, zero), ok.astype(ms.float32), 1 - finite, updated, correct])
            acc = ops.assign_add(self.acc, inc)
            agreed = self.stop.agreed if self.stop is not None else ops.zeros(1, ms.float32)
            return ops.concat([out[:4], agreed, ops.depend(self.acc, acc), out[4:]])

        def reset(self) -> None:
            self.acc.set_data(ms.Tensor(np.zeros(5, np.float32)))

    cell = RunStep()
    cell.set_train(True)
    return cell
