"""What a rank of a multi-rank run does differently from a single process, as hooks that the
trainer's Run calls (train/run.py is above this module and hands itself nothing but plain values).

- rank 0 writes the run's events, takes the control requests and saves the checkpoints; the other
  ranks write nothing but their msrun log and their verdict (`ranks/rank-<rank>.json`);
- every rank sums a stop flag, so a stop that rank 0 took from the inbox, or a signal any rank got,
  ends them all after that same step: once after set-up in an AllReduce of its own (StopFlag), then
  in the train step's own loss AllReduce (StepStop, Trainer.epoch_steps), agreed with each call;
- rank 0 alone evaluates: what it decides after an eval reaches the others in an AllReduce of its
  own at the epoch's end (`from_leader`), so that they stop, or lower the rate, at the same step.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from ..control import ControlInbox
from ..events import EventLog
from ..rundir import atomic_write_json
from .world import RANKS_DIR, RankInfo

# Test-only fault injection, read by the ranks: "RANK:STEP" makes that rank print a line to its
# log and os._exit(3) right after that global step (test/runner/distributed/test_msrun.py).
FAULT_ENV = "ASCEND_FINETUNE_TEST_EXIT_AT"
FAULT_EXIT_CODE = 3


def join(info: RankInfo) -> None:
    """Join msrun's cluster and set data-parallel mode, with gradients averaged over the ranks.
    Called once the device is set (init() needs it)."""
    import mindspore as ms  # deferred like every MindSpore import: see train/run.py
    from mindspore.communication import get_group_size, get_rank, init

    init()
    if (get_rank(), get_group_size()) != (info.rank, info.size):
        raise RuntimeError(
            f"msrun gave rank {get_rank()} of {get_group_size()}, but RANK_ID/MS_WORKER_NUM said "
            f"{info.rank} of {info.size}"
        )
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=info.size)


class NullLog:
    """The event log of a rank other than 0: it writes nothing."""

    seq = 0

    def emit(self, type_: str, **payload: Any) -> dict[str, Any]:
        return {"type": type_, **payload}

    def close(self) -> None:
        pass


class NoInbox(ControlInbox):
    """Only rank 0 reads control/: the others learn of a stop through the stop flag."""

    def __init__(self) -> None:
        pass

    def poll(self) -> list[tuple[str, str]]:
        return []

    def clear(self) -> None:
        pass


class RankSum:
    """Sums a float32 vector over the ranks in an AllReduce of its own (CPU's AllReduce supports
    only a sum); every rank must call it at the same point with the same length."""

    def __init__(self) -> None:
        import mindspore as ms
        from mindspore import nn, ops

        class Sum(nn.Cell):
            def __init__(self) -> None:
                super().__init__()
                self.all_reduce = ops.AllReduce()

            def construct(self, x: Any) -> Any:
                return self.all_reduce(x)

        self._ms, self._cell = ms, Sum()

    def __call__(self, values: list[float]) -> list[float]:
        import numpy as np

        return [float(v) for v in self._cell(self._ms.Tensor(np.array(values, np.float32))).asnumpy()]


class StopFlag(RankSum):
    """Sums one float over the ranks: > 0 means some rank wants to stop after this step."""

    def __call__(self, wanted: bool) -> bool:  # type: ignore[override]
        return super().__call__([1.0 if wanted else 0.0])[0] > 0.5


class StepStop:
    """The stop flag carried by the train step's own loss AllReduce (amp.TrainStep.loss_sum, which
    sums the loss over the ranks): that AllReduce sums [loss, this rank's stop wish] instead, and
    keeps the sum of the wishes in `agreed`, so that agreeing on a stop costs no graph and no device
    read of its own (StopFlag costs both, every step). The wish set before step k is agreed in step k:
    a loop that uses this (Trainer.epoch_steps) stops every rank after the step whose `agreed` is
    > 0, never on a rank's own wish alone. `reduce` replaces the AllReduce in single-process tests."""

    def __init__(self, step: Any, reduce: Any = None) -> None:
        import mindspore as ms
        import numpy as np
        from mindspore import Parameter, nn, ops

        class LossAndStopSum(nn.Cell):
            def __init__(self) -> None:
                super().__init__(auto_prefix=False)
                self.all_reduce = reduce if reduce is not None else ops.AllReduce()
                zero = np.zeros(1, np.float32)
                self.wish = Parameter(ms.Tensor(zero), name="stop_wish", requires_grad=False)
                self.agreed = Parameter(ms.Tensor(zero), name="stop_agreed", requires_grad=False)

            def construct(self, loss: Any) -> Any:
                both = self.all_reduce(ops.concat([loss.astype(ms.float32).reshape(1), self.wish]))
                return ops.depend(both[0].astype(loss.dtype), ops.assign(self.agreed, both[1:]))

        self._ms, self._np = ms, np
        self.cell = LossAndStopSum()
        self._wanted = False
        step.loss_sum = self.cell

    def want(self, flag: bool) -> None:
        """This rank's wish for the next step (written to the device only when it changes)."""
        if flag != self._wanted:
            self.cell.wish.set_data(self._ms.Tensor(self._np.array([1.0 if flag else 0.0], self._np.float32)))
            self._wanted = flag


class RankStrategy:
    """One rank's part in a run that msrun started (train/rank.py builds it)."""

    def __init__(self, info: RankInfo, run_dir: str):
        self.info, self.run_dir = info, run_dir
        fault = os.environ.get(FAULT_ENV, "")
        self._fault = tuple(int(v) for v in fault.split(":")) if re.fullmatch(r"\d+:\d+", fault) else None
        self._stop_flag: StopFlag | None = None
        self._leader_sum: RankSum | None = None

    @property
    def leads(self) -> bool:
        """Rank 0: writes the events, takes the control requests, evaluates and saves checkpoints."""
        return self.info.rank == 0

    def event_log(self) -> EventLog | NullLog:
        return EventLog(os.path.join(self.run_dir, "events.jsonl")) if self.leads else NullLog()

    def inbox(self) -> ControlInbox:
        return ControlInbox(self.run_dir) if self.leads else NoInbox()

    def after_steps(self, first: int, last: int) -> None:
        """The test fault (FAULT_ENV), when its step is among the steps just done."""
        if self._fault and self._fault[0] == self.info.rank and first <= self._fault[1] <= last:
            sys.stderr.write(
                f"test fault ({FAULT_ENV}): rank {self.info.rank} exits with code {FAULT_EXIT_CODE} "
                f"after step {self._fault[1]}\n"
            )
            sys.stderr.flush()
            os._exit(FAULT_EXIT_CODE)

    def stop_agreed(self, stop_requested: bool) -> bool:
        """Whether any rank wants to stop, in an AllReduce of its own (all ranks call this at the same
        point): once, before the first step, so that a stop sent during set-up ends the run there.
        Between steps the flag rides in the step's AllReduce instead (StepStop)."""
        if self._stop_flag is None:
            self._stop_flag = StopFlag()
        return self._stop_flag(stop_requested)

    def from_leader(self, values: list[float]) -> list[float]:
        """Rank 0's `values` on every rank (all ranks call this at the same point, with the same
        length): an AllReduce sum to which the other ranks add zeros, so that every rank gets rank
        0's float32 values exactly. Rank 0 alone evaluates, so its decisions after an eval (early
        stopping, a plateau's lower rate: train/knobs.py) reach the others this way, before the
        next step: every rank stops, or changes its rate, at the same step."""
        if self._leader_sum is None:
            self._leader_sum = RankSum()
        return self._leader_sum(values if self.leads else [0.0] * len(values))

    def write_verdict(
        self,
        status: str,
        error: dict[str, Any] | None,
        code: int,
        step: int | None,
        net: Any,
        preprocess: dict[str, Any] | None = None,
    ) -> None:
        """ranks/rank-<rank>.json: how this rank ended, for the launcher (distributed/launcher.py), and
        the preprocessing it trained with (the same on every rank: train/weights_setup.py)."""
        atomic_write_json(
            os.path.join(self.run_dir, RANKS_DIR, f"rank-{self.info.rank}.json"),
            {
                "rank": self.info.rank,
                "pid": os.getpid(),
                "status": status,
                "error": error,
                "exit_code": code,
                "step": step,
                "weights_l1": weights_l1(net),
                "preprocess": preprocess,
            },
        )


def weights_l1(net: Any) -> float | None:
    """Sum of |w| over the trainable weights: equal on every rank when the updates were averaged."""
    import numpy as np

    if net is None:
        return None
    try:
        return float(sum(np.abs(p.asnumpy().astype(np.float64)).sum() for p in net.trainable_params()))
    except Exception:  # a rank that failed mid-step: the verdict matters, not this
        return None
