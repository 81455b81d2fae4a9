"""One training process's life: the run directory's contract (lock, status.json, spec.json,
events.jsonl, exit codes), the step loop with per-step telemetry, stop and checkpoint requests, and
the ending, with every failure turned into a `run_finished`.

The process that starts a Run says how it takes part (`RunSetup`): the CLI's `train` of a single
process holds the run directory; one of msrun's ranks (train/rank.py) does not (its launcher does)
and brings its rank's strategy, event log and inbox. The CLI hands a run of several ranks to the
launcher (distributed/launcher.py) instead of calling `execute`.

It stays one file above the 450-line mark: the contract's order (lock, then status, then events, then
the ending) is what it guarantees, and splitting the loop from its ending would spread that order.
"""

from __future__ import annotations

import fcntl
import math
import os
import platform
import signal
import socket
import time
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..checkpoints.errors import PretrainedError, disk_full_error, error_dict, exception_error, is_disk_full
from ..clierrors import bad_spec
from ..control import ControlInbox
from ..data.folder import DataError
from ..device.telemetry import DEFAULT_INTERVAL_S, Sampler, start_sampler
from ..distributed.strategy import NullLog, RankStrategy
from ..events import EventLog
from ..rundir import (
    UnsafeFile,
    atomic_write_json,
    make_reserve,
    open_lock,
    process_start,
    release_reserve,
    write_status,
)
from ..spec import SpecError
from ..spec_types import RunSpec
from .summary import summary_for
from .trainer import NonFiniteLoss, Trainer
from .verdict import judge_log

if TYPE_CHECKING:  # MindSpore at import: the module itself imports it when the run starts
    from ..checkpoints.store import CheckpointStore


class RunBusy(Exception):
    """Another process holds the run directory."""


@dataclass
class RunSetup:
    """How this process takes part in its run. The default: the one process that holds the run
    directory (the CLI's `train`)."""

    holds_dir: bool = True  # takes the lock, clears control/, writes status.json and spec.json
    log: EventLog | NullLog | None = None  # None: RUN_DIR/events.jsonl
    inbox: ControlInbox | None = None  # None: RUN_DIR/control/
    rank: RankStrategy | None = None  # one of msrun's ranks: its part (distributed/strategy.py)


def _versions() -> dict[str, str]:
    import mindspore as ms

    return {"runner": __version__, "mindspore": ms.__version__, "python": platform.python_version()}


class Run:
    """One training process's life: events, status, the loop, stop/checkpoint requests, the ending."""

    def __init__(self, spec: RunSpec, run_dir: str, resume: str | None = None, setup: RunSetup | None = None):
        setup = setup or RunSetup()
        run_dir = os.path.abspath(run_dir)
        self.spec, self.run_dir = spec, run_dir
        self.resume_from = os.path.abspath(resume) if resume else None
        self.holds_dir = setup.holds_dir
        self.rank = setup.rank
        if self.holds_dir:
            os.makedirs(run_dir, exist_ok=True)
            # One process per run directory: a second writer would interleave seq numbers and cut the
            # first one's half-written line as "torn". The lock dies with the process. (msrun's ranks
            # run inside their launcher's hold.)
            # Opened without truncating or following a symlink, and never a FIFO (UnsafeFile). A file
            # object, as before: the lock goes when the Run does, not only at the end of MindSpore's
            # slow interpreter teardown.
            self._lock = os.fdopen(open_lock(os.path.join(run_dir, ".lock")), "rb", buffering=0)
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._lock.close()
                raise RunBusy(f"another process is writing to {run_dir}") from None
        # MindSpore writes files into the working directory (O1's rewritten_network/, graph dumps,
        # kernel caches): keep them in the run directory, not wherever the runner was started.
        os.chdir(run_dir)
        self.log: EventLog | NullLog = setup.log or EventLog(os.path.join(run_dir, "events.jsonl"))
        self.summary = summary_for(self.log, run_dir)  # summary.json, which `ls` lists
        self.stop_requested = False
        self.stop_reason: str | None = None
        self.inbox = setup.inbox or ControlInbox(run_dir)
        if self.holds_dir:
            # Requests left by an earlier process (a killed run) are not for this one. A rank must not
            # clear them: its launcher did at its start, and a second clear could drop a stop.
            self.inbox.clear()
        self.pending_warnings: list[dict[str, Any]] = []
        self.error: dict[str, Any] | None = None
        self.trainer: Trainer | None = None
        self.store: CheckpointStore | None = None
        self.sampler: Sampler | None = None
        self.last_ckpt_step = 0
        self.early_stop: dict[str, Any] | None = None  # run_finished's reason when early stopping ended the run

    def _flush_warnings(self) -> None:
        for w in self.pending_warnings:
            self.log.emit("warning", **w)
        self.pending_warnings.clear()

    def on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.stop_requested:  # a second signal: the user wants out now
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.stop_requested = True
        self.stop_reason = signal.Signals(signum).name

    def begin(self) -> None:
        """The run is running: status.json and spec.json (when this process holds the directory), and
        SIGTERM/SIGINT become a stop request. The launcher calls this too, before it starts msrun."""
        if self.holds_dir:
            write_status(
                self.run_dir,
                run_id=os.path.basename(self.run_dir),
                state="running",
                pid=os.getpid(),
                pid_start=process_start(os.getpid()),
                host=socket.gethostname(),
                started_at=time.time(),
                ended_at=None,
                exit_code=None,
                error=None,
                health=None,  # an earlier process's verdict (before a resume) is not this one's
            )
            atomic_write_json(os.path.join(self.run_dir, "spec.json"), self.spec)
            make_reserve(self.run_dir)  # the room its end needs on a disk that fills up (rundir.RESERVE)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self.on_signal)

    def execute(self) -> int:
        """Train in this process (a single-process run, or one rank of several) to the run's end."""
        self.begin()
        try:
            status, best, final = self._train()
            return self.finish(status, None, best, final, 0)
        except (SpecError, DataError, PretrainedError) as e:
            if isinstance(e, SpecError):
                return self.finish("failed", bad_spec(e, trace_tail=None), None, None, 2)
            extra = {"path": e.path, "fix": e.fix} if isinstance(e, DataError) else {}
            message = e.message if isinstance(e, DataError) else str(e)
            error = error_dict("bad_input", message, e.why, e.params, **extra, trace_tail=None)
            return self.finish("failed", error, None, None, 2)
        except NonFiniteLoss as e:
            error = error_dict("nonfinite_loss", str(e), "nonfinite_loss", e.params, trace_tail=None)
            return self.finish("failed", error, None, None, 1)
        except UnsafeFile as e:  # a symlink, FIFO or folder planted where the run writes a file
            return self.finish("failed", e.as_dict(), None, None, 2)
        except Exception as e:
            tail = "\n".join(traceback.format_exc().strip().splitlines()[-15:])
            if is_disk_full(e):
                return self.finish("failed", disk_full_error(self.run_dir, e, tail), None, None, 1)
            return self.finish("failed", exception_error(e, trace_tail=tail), None, None, 1)

    def finish(
        self,
        status: str,
        error: dict[str, Any] | None,
        best: dict[str, Any] | None,
        final: dict[str, Any] | None,
        code: int,
    ) -> int:
        """Write the run's end: run_finished, status.json (when held here), this rank's verdict.

        On a full disk the end still gets written: the reserve is freed first, and a log that cannot
        take run_finished does not keep status.json from saying how the run ended."""
        store_best = self.store.best() if self.store else None
        if self.sampler:
            self.sampler.stop()  # no device event after run_finished
        if self.holds_dir:
            release_reserve(self.run_dir)
        if not best and store_best:
            best = {k: store_best[k] for k in ("file", "epoch", "step", "metrics")}
        health = None
        if isinstance(self.log, EventLog):
            try:
                health = judge_log(self.log.path, self.spec, status, error)
            except OSError:
                pass  # an unreadable log (a full disk) leaves the verdict out, never the end
        try:
            self._flush_warnings()  # found during a set-up that then failed
            extra = {"early_stop": self.early_stop} if self.early_stop else {}
            self.log.emit("run_finished", status=status, error=error, best=best, final=final, health=health, **extra)
        except OSError:
            pass  # status.json below still records the end
        try:
            self.log.close()
        except OSError:
            pass
        self.inbox.clear()  # a request that came too late must not reach a later resume
        self.error = error
        if self.summary:
            self.summary.update(status)
        if self.holds_dir:
            write_status(self.run_dir, state=status, ended_at=time.time(), exit_code=code, error=error, health=health)
        if self.rank:
            tr = self.trainer
            pre = tr.preprocess.describe() if tr else None
            self.rank.write_verdict(status, error, code, tr.step if tr else None, tr.net if tr else None, pre)
        return code

    def _take_requests(self, metrics: dict[str, Any]) -> bool:
        """The control inbox (rank 0: the other ranks learn of a stop through the stop flag), read
        between the trainer's calls; returns whether this process wants to stop."""
        tr = self.trainer
        assert tr is not None
        if self.rank is None or self.rank.leads:
            for action, path in self.inbox.poll():
                if action == "stop":
                    self.stop_requested, self.stop_reason = True, "control"
                # on an epoch's last step the epoch-end checkpoint (with eval metrics) follows anyway
                elif action == "checkpoint" and self.last_ckpt_step != tr.step and tr.step % tr.steps_per_epoch:
                    self._checkpoint({**metrics, "reason": "requested"})
                self.inbox.done(path)
        return self.stop_requested

    def _checkpoint(self, metrics: dict[str, Any], ema_eval: dict[str, Any] | None = None) -> dict[str, Any]:
        """Save the weights (and, with train.ema, the EMA weights beside them, with `ema_eval`'s metrics)."""
        tr = self.trainer
        assert tr is not None and self.store is not None
        if self.rank is not None and not self.rank.leads:  # rank 0 saves; the weights are the same on every rank
            self.last_ckpt_step = tr.step
            return {"best": False}
        from ..checkpoints.store import state_entries  # MindSpore: deferred, see Trainer.__init__

        counters = {"steps_per_epoch": tr.steps_per_epoch, "total_steps": tr.total_steps}
        extra = {**tr.scaler_params(), **tr.knobs.state()}  # knobs: early-stopping and plateau counters
        entry = self.store.save(
            state_entries(tr.net, tr.optimizer, extra), tr.epoch_for_step(), tr.step, metrics, counters
        )
        self.log.emit("checkpoint", **entry)
        if tr.knobs.ema is not None:
            ema_metrics = {k: ema_eval[k] for k in ("val_loss", "val_acc")} if ema_eval else {}
            ema_entry = self.store.save(
                tr.knobs.ema.entries(tr.net), tr.epoch_for_step(), tr.step, ema_metrics, counters, kind="ema"
            )
            self.log.emit("checkpoint", **ema_entry)
            if ema_entry["best"]:  # the EMA weights scored better: the raw ones are no longer best
                self.last_ckpt_step = tr.step
                return ema_entry
            now = self.store.best()
            entry = {**entry, "best": bool(now and now["file"] == entry["file"])}
        self.last_ckpt_step = tr.step
        return entry

    def _train(self) -> tuple[str, dict[str, Any] | None, dict[str, Any]]:
        from ..checkpoints.run_record import LINEAGE_KEYS
        from ..checkpoints.store import CheckpointStore  # MindSpore: deferred, see Trainer.__init__

        spec = self.spec
        rank = self.rank.info if self.rank else None
        tr = self.trainer = Trainer(
            spec, self.run_dir, self.pending_warnings, rank, resume=self.resume_from, emit=self.log.emit
        )
        ck = spec["checkpoint"]
        self.store = CheckpointStore(self.run_dir, spec["name"], ck["format"], ck["keep_max"], ck["keep_best"])
        self.store.extra["preprocess"] = tr.preprocess.describe()
        if tr.pretrained_info:
            self.store.extra["weights"] = {
                k: tr.pretrained_info[k] for k in (*LINEAGE_KEYS, "from") if k in tr.pretrained_info
            }
        if self.resume_from:
            tr.resume(self.resume_from)
        self.last_ckpt_step = tr.step
        self.log.emit(
            "run_started",
            run_id=os.path.basename(self.run_dir),
            spec=spec,
            classes=tr.classes,
            num_train=len(tr.train_samples),
            num_val=len(tr.val_samples),
            steps_per_epoch=tr.steps_per_epoch,
            total_steps=tr.total_steps,
            versions=_versions(),
            device={
                "target": tr.target,
                "ids": spec["device"]["ids"],
                "host": socket.gethostname(),
                "workers": tr.workers,
                "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA"),
            },
            global_batch=tr.global_batch,
            amp={"level": tr.amp_plan.level, "loss_scale": tr.amp_plan.loss_scale},
            pretrained=tr.pretrained_info,
            preprocess=tr.preprocess.describe(),
            resumed_from={"file": self.resume_from, "step": tr.step} if self.resume_from else None,
        )
        self._flush_warnings()
        # NPU utilisation, HBM, temperature and power as `device` events, where npu-smi exists: rank 0
        # for its node (another node's launcher samples that node's, distributed/launcher.py).
        if self.rank is None or self.rank.leads:
            self.sampler = start_sampler(
                self.log.emit, spec["device"]["ids"], float(spec["device"].get("telemetry_s", DEFAULT_INTERVAL_S))
            )
        if tr.features:
            tr.features.ensure()  # before the first step's clock: compute_s reports its cost, not step 1
            self._flush_warnings()  # feature_cache_rejected: caches found and not trusted
            fc = tr.features.describe()
            self.log.emit("feature_cache", **fc)
            if self.holds_dir:  # `ls` shows where this run's features came from
                write_status(self.run_dir, feature_cache={k: fc[k] for k in ("key", "reused_from", "rejected")})
        max_bad = spec["train"]["max_nonfinite_steps"]
        every = spec["checkpoint"]["every_steps"]
        # A stop ends the run only once agreed: in one process, its own wish; of several ranks, the
        # wish of any of them, summed by every rank at the same point (a rank never stops alone).
        stopping = self._take_requests({})  # a stop sent during set-up is honoured before the first step
        if self.rank is not None:
            stopping = self.rank.stop_agreed(stopping)
            if stopping and not self.stop_requested:
                self.stop_reason = "peer"
        bad_run = 0
        last_metrics: dict[str, Any] = {}
        best = None

        def wants_stop() -> bool:
            return self._take_requests(last_metrics)

        while tr.step < tr.total_steps and not stopping:
            epoch = tr.step // tr.steps_per_epoch + 1
            skip_in_epoch = tr.step - (epoch - 1) * tr.steps_per_epoch
            epoch_t0, loss_sum, loss_n, overflows = time.perf_counter(), 0.0, 0, 0
            unfrozen = tr.begin_epoch(epoch)  # model.unfreeze (train/unfreeze.py)
            if unfrozen:
                self.log.emit("unfreeze", **unfrozen)
            # One record per step, or per sink on Ascend (Trainer.epoch_steps): requests are taken
            # between the trainer's calls, and a stop ends every rank after the same call.
            for rec in tr.epoch_steps(epoch, skip_in_epoch, wants_stop):
                first, loss, n = rec["first_step"], rec["loss"], rec["step"] - rec["first_step"] + 1
                overflows += rec["overflows"]
                # A sink's counts over its steps: its `overflow` and `skipped` flags are its last step's.
                step_fields: dict[str, Any] = (
                    {
                        "first_step": first,
                        "mean_loss": rec["mean_loss"],
                        "overflows": rec["overflows"],
                        "skipped_updates": rec["skipped_updates"],
                    }
                    if n > 1
                    else {}
                )
                if rec["data_ms"] is not None:
                    step_fields["data_ms"] = rec["data_ms"]
                self.log.emit(
                    "step",
                    epoch=epoch,
                    step=tr.step,
                    loss=loss,
                    lr=rec["lr"],
                    loss_scale=rec["loss_scale"],
                    overflow=rec["overflow"],
                    skipped=rec["skipped"],
                    step_ms=rec["step_ms"],
                    img_per_s=rec["img_per_s"],
                    train_acc=rec["train_acc"],
                    **step_fields,
                )
                if rec["warning"]:
                    self.log.emit("warning", **rec["warning"])  # data_bound
                if self.rank is not None:
                    self.rank.after_steps(first, tr.step)
                finite_n = n - rec["nonfinite"]
                loss_sum, loss_n = loss_sum + (rec["mean_loss"] or 0.0) * finite_n, loss_n + finite_n
                if not rec["nonfinite"]:
                    bad_run = 0
                else:  # consecutive NaN/Inf losses, as far as a sink's counts tell
                    bad_run = bad_run + n if finite_n == 0 else (0 if math.isfinite(loss) else 1)
                    if bad_run >= max_bad:
                        raise NonFiniteLoss(
                            f"the loss was NaN or Inf for {bad_run} consecutive steps (up to step {tr.step}); "
                            "lower train.lr, or check the data and the pretrained weights",
                            steps=bad_run,
                            step=tr.step,
                        )
                last_metrics["loss"] = loss  # in place: the requests' checkpoints read it
                # A signal during the call stops one process after it; ranks stop on the agreed flag.
                stopping = self.stop_requested if self.rank is None else rec["stop"]
                if stopping and not self.stop_requested:
                    self.stop_reason = "peer"  # another rank got the signal (or rank 0 took a stop)
                if stopping:
                    break
                # A checkpoint every N steps lands at the end of the call that reached a multiple of N
                # (its event says that step); an epoch's last step is saved after eval, below.
                if (
                    tr.step // every > (first - 1) // every
                    and tr.step % tr.steps_per_epoch
                    and self.last_ckpt_step != tr.step
                ):
                    self._checkpoint(dict(last_metrics))
            ran = tr.step > (epoch - 1) * tr.steps_per_epoch + skip_in_epoch
            if self.rank is None:
                stopping = self.stop_requested  # also a wish that kept epoch_steps from another call
            if stopping and (tr.step % tr.steps_per_epoch or not ran):
                break  # mid-epoch: no eval; a stop on an epoch's last step still finishes that epoch
            ev = tr.evaluate()
            metrics = dict(last_metrics)
            ev_ema = tr.knobs.evaluate_ema() if ev else None
            if ev:
                ema = {k: ev_ema[k] for k in ("val_loss", "val_acc", "per_class_acc")} if ev_ema else None
                self.log.emit("eval", epoch=epoch, step=tr.step, **ev, **({"ema": ema} if ema else {}))
                metrics.update(val_loss=ev["val_loss"], val_acc=ev["val_acc"], val_top5=ev["val_top5"])
            extra = {}
            if tr.features and not tr.features.reported:
                extra["feature_cache"] = tr.features.describe()  # built or found during this epoch
                tr.features.reported = True
            self.log.emit(
                "epoch_end",
                epoch=epoch,
                train_loss=loss_sum / loss_n if loss_n else None,
                overflow_count=overflows,
                epoch_s=round(time.perf_counter() - epoch_t0, 3),
                **extra,
            )
            if self.summary:
                self.summary.update()
            watched = {**metrics, "train_loss": loss_sum / loss_n if loss_n else None}
            # Before the checkpoint (its counters); of several ranks, rank 0's decisions reach every rank here.
            from_leader = self.rank.from_leader if self.rank is not None else None
            early_stop = tr.knobs.after_epoch(epoch, watched, self.log.emit, from_leader)
            entry = self._checkpoint(metrics, ev_ema)
            if entry["best"]:  # the raw weights' checkpoint, or the EMA one (train.ema) when it scored better
                best = {k: entry[k] for k in ("file", "epoch", "step", "metrics")}
            if early_stop:
                self.early_stop = early_stop
                break
        final = {"epoch": tr.epoch_for_step(), "step": tr.step, "total_steps": tr.total_steps, **last_metrics}
        if stopping:
            if self.last_ckpt_step != tr.step:
                self._checkpoint({**last_metrics, "reason": "stopped"})
            final["stop_reason"] = self.stop_reason
            return "stopped", best, final
        return "completed", best, final
