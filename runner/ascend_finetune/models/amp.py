"""Mixed precision and loss scaling, resolved per backend, and the compiled train step.

One engine on every backend: MindSpore's functional path (`value_and_grad` + `jit` +
`DynamicLossScaler`). `Model.train` with `build_train_network` refuses dynamic loss scaling on CPU,
and hands callbacks only the last step of a sink; the functional step returns loss, overflow and
scale of every step in one device read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import mindspore as ms
from mindspore import amp, nn, ops

from ..spec_types import AmpSpec


@dataclass
class AmpPlan:
    level: str  # the level actually used
    loss_scale: str  # dynamic | fixed | none, actually used
    notes: list[tuple[str, str]]  # (warning code, message) for every change from the spec


def plan(spec_amp: AmpSpec, target: str) -> AmpPlan:
    """`auto` goes to MindSpore as it is: since 2.x `auto_mixed_precision(net, "auto")` casts op by op
    from its white and black lists (BatchNorm, Softmax, Log stay float32) on every backend, CPU
    included (measured on the 2.10 CPU wheel). Older releases mapped it per backend and raised on CPU."""
    return AmpPlan(spec_amp["level"], spec_amp["loss_scale"], [])


def apply_level(net: nn.Cell, level: str) -> nn.Cell:
    """O1 casts the white-listed ops, O2 the whole net but BatchNorm, O3 everything, to float16;
    auto casts op by op (MindSpore's lists)."""
    return net if level == "O0" else amp.auto_mixed_precision(net, level)


def make_scaler(spec_amp: AmpSpec, mode: str) -> Any:
    if mode == "dynamic":
        return amp.DynamicLossScaler(
            float(spec_amp["init_scale"]), int(spec_amp["scale_factor"]), int(spec_amp["scale_window"])
        )
    if mode == "fixed":
        return amp.StaticLossScaler(float(spec_amp["init_scale"]))
    return None


def correct_count(logits: Any, y: Any) -> Any:
    """How many rows of the batch the logits classify right, as a float32 scalar outside the
    gradient: the label's index, or with mixup/cutmix's soft label rows the largest share's."""
    labels = y.argmax(-1) if len(y.shape) > 1 else y
    hits = ops.equal(logits.argmax(-1).astype(ms.int32), labels.astype(ms.int32))
    return ops.stop_gradient(hits.astype(ms.float32).sum())


class _LossCell(nn.Cell):
    """The network and its loss, computed in float32 whatever the AMP level, and the batch's
    correct predictions from the same forward pass (train accuracy without a second pass)."""

    def __init__(self, net: nn.Cell, loss_fn: nn.Cell):
        super().__init__(auto_prefix=False)
        self.net, self.loss_fn = net, loss_fn

    def construct(self, x: Any, y: Any) -> Any:
        logits = self.net(x).astype(ms.float32)
        return self.loss_fn(logits, y), correct_count(logits, y)


class TrainStep(nn.Cell):
    """One compiled training step; returns [loss, grads_finite, scale, updated, correct] as one float32
    tensor (one device read per step); `correct` counts this rank's images the forward pass (before
    the update) classified right.

    With loss scaling, gradients that are not finite are an overflow: the update is skipped and a
    dynamic scaler lowers the scale, as MindSpore's TrainOneStepWithLossScaleCell does (with the
    same `amp.all_finite`). A non-finite loss skips the update too, but is not an overflow.
    Without loss scaling there is no overflow to detect and only the loss gates the update: any
    reduction over all gradients costs 30-50% of a resnet18 step on CPU (bench/runner_overhead.py
    --breakdown), and a gradient that overflows in fp32 with a finite loss shows up as NaN losses
    on the next steps, which fail the run (train.max_nonfinite_steps).

    An nn.Cell like MindSpore's own train cells: a `jit` function measured slower on CPU.
    """

    # Set in __init__ (None unless distributed); annotated for mypy only, no class attribute.
    grad_reducer: Any
    loss_sum: Any
    finite_sum: Any

    def __init__(
        self, net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer, scaler: Any, distributed: bool = False
    ) -> None:
        super().__init__(auto_prefix=False)
        self.network = _LossCell(net, loss_fn)
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.scaler = scaler
        self.scaled = scaler is not None
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        # Data parallel (msrun): a custom GradOperation cell gets no gradient AllReduce from
        # MindSpore, so it averages the gradients itself, as TrainOneStepCell does, before the
        # unscale and the finiteness check: every rank then sees the same overflow and makes the
        # same update. The loss is averaged too, so every rank gates its update on the same value
        # (a rank skipping alone would drift from the others) and reports the global batch's loss.
        self.distributed = distributed
        self.ranks, self.grad_reducer, self.loss_sum, self.finite_sum = 1, None, None, None
        if distributed:
            from mindspore.communication import get_group_size

            self.ranks = get_group_size()
            self.grad_reducer = nn.DistributedGradReducer(self.weights, mean=True, degree=self.ranks)
            self.loss_sum = ops.AllReduce()
            self.finite_sum = ops.AllReduce()  # sum: the only reduction CPU supports

    def local_finite(self, grads: Any) -> Any:
        """Whether this rank's gradients are finite. In saturation mode (910A, or
        MS_ASCEND_CHECK_OVERFLOW_MODE=SATURATION_MODE on 910B) `amp.all_finite` reads this device's
        own overflow status, not the reduced gradients' values, so ranks can differ here."""
        return amp.all_finite(grads)

    def agree(self, finite: Any) -> Any:
        """Finite on every rank, or on none: the flag summed over the ranks (as MindSpore's
        TrainOneStepWithLossScaleCell does with its overflow status), so no rank skips a step alone."""
        if self.distributed:
            return self.finite_sum(finite.astype(ms.float32)) >= self.ranks - 0.5
        return finite

    def construct(self, x: Any, y: Any) -> Any:
        loss, correct = self.network(x, y)
        sens = self.scaler.scale_value.astype(loss.dtype) if self.scaled else ops.ones((), loss.dtype)
        # The count has no gradient: its sensitivity is 0 (the network returns both outputs).
        grads = self.grad(self.network, self.weights)(x, y, (sens, ops.zeros_like(correct)))
        loss, finite, scale, update = self.apply_update(grads, loss)
        return ops.stack([loss, finite.astype(ms.float32), scale, update.astype(ms.float32), correct])

    def apply_update(self, grads: Any, loss: Any) -> Any:
        """The update from one step's scaled gradients and loss, shared with AccumulateStep: reduced
        over the ranks, unscaled, checked, the scale adjusted, then applied or skipped. Returns (loss,
        finite, scale after the adjustment, whether the optimizer ran)."""
        if self.distributed:
            grads = self.grad_reducer(grads)
            loss = self.loss_sum(loss) / self.ranks
        if self.scaled:
            grads = self.scaler.unscale(grads)
        loss_ok = ops.isfinite(loss)
        if self.scaled:
            finite = self.agree(self.local_finite(grads))
            adjusted = self.scaler.adjust(finite)
            loss = ops.depend(loss, adjusted)
            # the scale after this step's adjustment: what the next step will use
            scale = ops.depend(self.scaler.scale_value, adjusted).astype(ms.float32)
            update = ops.logical_and(finite, loss_ok)
        else:
            finite = ops.ones((), ms.bool_)
            scale = ops.ones((), ms.float32)
            update = loss_ok
        if update:
            loss = ops.depend(loss, self.optimizer(grads))
        return loss, finite, scale, update


def build_train_step(
    net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer, scaler: Any, distributed: bool = False
) -> TrainStep:
    step = TrainStep(net, loss_fn, optimizer, scaler, distributed)
    step.set_train(True)
    return step


def build_eval_step(net: nn.Cell) -> Callable[[Any], Any]:
    @ms.jit
    def logits(x: Any) -> Any:
        return net(x).astype(ms.float32)

    return logits
