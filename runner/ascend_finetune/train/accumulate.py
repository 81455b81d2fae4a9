"""Gradient accumulation (`train.accumulate_steps` k): one optimizer update per k micro-batches, so an
effective batch of k * data.batch_size fits a device that holds only data.batch_size.

Counting: a run's *step* is an optimizer update (k micro-batches). steps_per_epoch, total_steps,
every step event, the learning-rate schedule, checkpoint.every_steps and the checkpoints' step_num
all count updates; the micro-batches of an epoch that do not fill a last update are dropped (as the
pipeline drops a last partial batch). A checkpoint is always taken at an update boundary, with the
accumulators empty, so a resume starts a fresh accumulation: nothing half-accumulated is lost or
needs saving.

The update is the mean of the k micro-batches' gradients (each the gradient of its batch's mean
loss): the gradient of the mean loss over all k*B images, as one batch k times larger would give,
up to float rounding and BatchNorm, whose batch statistics are per micro-batch.

Loss scaling: each micro-step's gradients are computed at the current scale and summed into float32
accumulators; the scale changes only after an update (the scaler's adjust runs once per update). A
micro-step whose loss or gradients are not finite leaves NaN/Inf in the sums (a non-finite value
survives addition), so the whole update is skipped and, with a dynamic scale, the scale drops: the
check is exact and costs one finiteness reduction per update, not one per micro-step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import nn, ops

from ..models.amp import TrainStep

_add = ops.MultitypeFuncGraph("accumulate_add")
_zero = ops.MultitypeFuncGraph("accumulate_zero")


@_add.register("Tensor", "Tensor")
def _add_into(acc: Any, g: Any) -> Any:
    return ops.assign_add(acc, g.astype(acc.dtype))


@_zero.register("Tensor")
def _zero_out(acc: Any) -> Any:
    return ops.assign(acc, ops.zeros_like(acc))


class MicroStep(nn.Cell):
    """One micro-batch: its loss and scaled gradients added to the accumulators; no update."""

    def __init__(self, owner: AccumulateStep) -> None:
        super().__init__(auto_prefix=False)
        self.network, self.weights = owner.network, owner.weights
        self.accum, self.loss_acc, self.correct_acc = owner.accum, owner.loss_acc, owner.correct_acc
        self.scaler, self.scaled = owner.scaler, owner.scaled
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.hyper_map = ops.HyperMap()

    def construct(self, x: Any, y: Any) -> Any:
        loss, correct = self.network(x, y)
        sens = self.scaler.scale_value.astype(loss.dtype) if self.scaled else ops.ones((), loss.dtype)
        grads = self.grad(self.network, self.weights)(x, y, (sens, ops.zeros_like(correct)))
        done = self.hyper_map(_add, self.accum, grads)
        done = ops.depend(done, ops.assign_add(self.correct_acc, correct.reshape(1)))
        return ops.depend(ops.assign_add(self.loss_acc, loss.reshape(1)), done)


class AccumulateStep(TrainStep):
    """The update of an accumulation: the mean of the summed gradients, unscaled, reduced over the
    ranks (data parallel) and checked as TrainStep checks one batch's, then applied or skipped. The
    accumulators are emptied either way. Returns TrainStep's [loss, finite, scale, updated, correct],
    the loss being the mean of the micro-batches' losses and `correct` their correct predictions' sum."""

    def __init__(
        self, net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer, scaler: Any, k: int, distributed: bool = False
    ) -> None:
        super().__init__(net, loss_fn, optimizer, scaler, distributed)
        self.k = k
        self.accum = self.weights.clone(prefix="accumulated", init="zeros")
        self.loss_acc = ms.Parameter(ms.Tensor(np.zeros(1, np.float32)), name="accumulated_loss", requires_grad=False)
        zero = ms.Tensor(np.zeros(1, np.float32))
        self.correct_acc = ms.Parameter(zero, name="accumulated_correct", requires_grad=False)
        self.hyper_map = ops.HyperMap()
        self.micro = MicroStep(self)
        self.micro.set_train(True)

    def construct(self) -> Any:  # type: ignore[override]
        inv = ms.Tensor(1.0 / self.k, ms.float32)
        grads = self.hyper_map(ops.partial(ops.mul, inv), self.accum)
        loss = self.loss_acc[0] * inv
        loss, finite, scale, update = self.apply_update(grads, loss)
        loss = ops.depend(loss, self.hyper_map(_zero, self.accum))
        loss = ops.depend(loss, ops.assign(self.loss_acc, ops.zeros_like(self.loss_acc)))
        correct = self.correct_acc[0] * 1.0  # read before it is emptied
        loss = ops.depend(loss, correct)
        loss = ops.depend(loss, ops.assign(self.correct_acc, ops.zeros_like(self.correct_acc)))
        return ops.stack([loss, finite.astype(ms.float32), scale, update.astype(ms.float32), correct])


class Accumulating:
    """The trainer's train step under accumulation: called with a group of k micro-batches (lists of
    images and labels, `grouped` below), it runs k micro-steps and one update and returns the update's
    [loss, finite, scale, updated, correct] (one device read, as the one-batch step)."""

    def __init__(self, step: AccumulateStep) -> None:
        self.step = step

    def __call__(self, xs: list[Any], ys: list[Any]) -> Any:
        for x, y in zip(xs, ys):
            self.step.micro(x, y)
        return self.step()


class AccumulatingRunStep:
    """Trainer.run_step's counterpart (steps.run_step_cell's RunStep) for accumulation: the same eleven
    outputs, the per-call sums kept on the host (one update per call; no sink)."""

    def __init__(self, acc: Accumulating, stop: Any) -> None:
        self.acc, self.stop = acc, stop

    def reset(self) -> None:
        pass

    def __call__(self, xs: list[Any], ys: list[Any]) -> Any:
        loss, finite, scale, updated, correct = self.acc(xs, ys).asnumpy().tolist()
        agreed = float(self.stop.agreed.asnumpy().reshape(-1)[0]) if self.stop is not None else 0.0
        ok = bool(np.isfinite(loss))
        row = [
            loss,
            finite,
            scale,
            updated,
            agreed,
            loss if ok else 0.0,
            float(ok),
            1.0 - finite,
            updated,
            correct,
            correct,
        ]
        return ms.Tensor(np.array(row, np.float32))


def updates_per_epoch(batches: int, k: int) -> int:
    """Steps (updates) of an epoch of `batches` batches."""
    if batches < k:
        from ..data.folder import DataError

        raise DataError(
            "train.accumulate_steps",
            f"accumulate_steps is {k} but an epoch has only {batches} batches",
            f"set train.accumulate_steps to at most {batches}, or lower data.batch_size",
            "accumulate_above_batches",
            accumulate_steps=k,
            batches=batches,
        )
    return batches // k


def build_accumulating(
    net: nn.Cell, loss_fn: nn.Cell, optimizer: nn.Optimizer, scaler: Any, k: int, distributed: bool
) -> tuple[AccumulateStep, Accumulating]:
    """The update cell (what StepStop hooks into, distributed) and the step the trainer calls."""
    step = AccumulateStep(net, loss_fn, optimizer, scaler, k, distributed)
    step.set_train(True)
    return step, Accumulating(step)


def grouped(batches: Iterable[tuple[Any, Any]], k: int) -> Iterator[tuple[list[Any], list[Any]]]:
    """Consecutive micro-batches in groups of k; a last group short of k is dropped."""
    xs: list[Any] = []
    ys: list[Any] = []
    for x, y in batches:
        xs.append(x)
        ys.append(y)
        if len(xs) == k:
            yield xs, ys
            xs, ys = [], []
