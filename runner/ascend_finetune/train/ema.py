"""`train.ema`: an exponential moving average of the network's weights (timm's ModelEmaV2: every
float parameter, BatchNorm statistics included), `shadow = decay * shadow + (1 - decay) * weights`
after each applied update, in one compiled call. The run evaluates it beside the raw weights and
saves it as its own checkpoint (`<name>-ema.<ext>`, manifest `kind: "ema"`) under the raw names, so
`eval`, `export` and fine-tune-from read it like any checkpoint; a resume reads the shadow back
from the EMA checkpoint saved beside the one it resumes from."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

EMA_SUFFIX = "-ema"


def ema_file_for(ckpt: str) -> str:
    """The EMA checkpoint saved beside `ckpt` (same epoch and step)."""
    base, ext = os.path.splitext(ckpt)
    return base + EMA_SUFFIX + ext


class WeightEMA:
    def __init__(self, net: Any, decay: float):
        import mindspore as ms
        from mindspore import Parameter, ParameterTuple, nn, ops

        self.decay = float(decay)
        self.params = [p for p in net.get_parameters() if p.dtype in (ms.float32, ms.float16, ms.bfloat16)]
        self.shadow = ParameterTuple(
            Parameter(p.value().copy(), name=f"ema.{p.name}", requires_grad=False) for p in self.params
        )
        params = ParameterTuple(self.params)
        shadow = self.shadow

        class Update(nn.Cell):
            def __init__(self, d: float) -> None:
                super().__init__(auto_prefix=False)
                self.params, self.shadow, self.d = params, shadow, d

            def construct(self) -> Any:
                done = ()
                for s, p in zip(self.shadow, self.params):
                    done = done + (ops.assign(s, s * self.d + p.astype(s.dtype) * (1.0 - self.d)),)  # type: ignore[assignment]
                return done

        self._update = Update(self.decay)

    def update(self) -> None:
        self._update()

    @contextlib.contextmanager
    def swapped_in(self) -> Iterator[None]:
        """The network holds the EMA weights inside the block, its own weights again after it.
        `ops.assign` writes into the Parameters' buffers: after `set_data` the compiled eval step
        would go on reading the old ones (MindSpore 2.10, CPU)."""
        from mindspore import ops

        raw = [p.value().copy() for p in self.params]
        try:
            for p, s in zip(self.params, self.shadow):
                ops.assign(p, s.value().astype(p.dtype))
            yield
        finally:
            for p, v in zip(self.params, raw):
                ops.assign(p, v)

    def entries(self, net: Any) -> list[dict[str, Any]]:
        """The checkpoint entries of the EMA weights, under the network's own names."""
        from ..checkpoints.store import state_entries

        with self.swapped_in():
            out = state_entries(net, _NoOptimizer(), {})
            return [
                {"name": e["name"], "data": e["data"].value().copy() if hasattr(e["data"], "value") else e["data"]}
                for e in out
            ]

    def load(self, state: dict[str, Any]) -> list[str]:
        """The shadow from an EMA checkpoint's tensors; returns the names it lacked (kept as they are)."""
        import mindspore as ms
        from mindspore import ops

        missing = []
        for p, s in zip(self.params, self.shadow):
            if p.name in state and tuple(state[p.name].shape) == tuple(s.shape):
                ops.assign(s, ms.Tensor(state[p.name].asnumpy(), dtype=s.dtype))
            else:
                missing.append(p.name)
        return missing

    def reset_to_weights(self) -> None:
        from mindspore import ops

        for p, s in zip(self.params, self.shadow):
            ops.assign(s, p.value().astype(s.dtype))


class _NoOptimizer:
    """state_entries' optimizer for an EMA checkpoint: weights only (no moments to average)."""

    def get_parameters(self) -> list[Any]:
        return []
