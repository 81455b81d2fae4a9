"""The sweep's scheduler: one process per sweep (scheduler.lock), polling a few times a second.

Each round it reads the control requests (sweep-stop), follows every active trial's events (each new
eval value is reported to Optuna with its epoch; a trial the pruner rejects is stopped through its
run's control channel), tells Optuna how each finished run ended, and starts new trials on free
slots while the study has fewer than `trials` trials finished or running. The scheduler's own
events go to the sweep folder's events.jsonl (docs/protocol.md, "Sweeps").

Nothing is kept only in memory: which run belongs to a trial is a user attribute written before the
run starts (its run id is `<sweep_id>-t<number>` anyway), so a scheduler started again on the same
folder (resume) finds every trial Optuna still has as RUNNING and reconciles it with its run: a live
run is followed again, a finished one is told, and one that died without a result (or never
started) is told FAIL and enqueued again with the same parameters. No trial is lost or run twice.

Outcomes (the `outcome` user attribute): completed, pruned, failed (the run failed, or it finished
without a finite eval value), invalid (the trial's spec did not validate), lost (the run died
without a result) and stopped (stopped by sweep-stop). The last two are run again and do not count
toward `trials`; nor does surplus (asked past the budget when schedulers share a study: never run).

Above the ~450-line mark on purpose: the loop, its control requests and the trials' bookkeeping all
read and change the same study, slots and active trials; the folder, the slots, the trial runs and
the report are modules of their own already.
"""

from __future__ import annotations

import math
import os
import signal
import socket
import time
from types import FrameType
from typing import Any

import optuna
from optuna.trial import TrialState

from .. import spec as specmod
from ..checkpoints.errors import exception_error
from ..control import drop_requests, ensure_control_dir, request
from ..events import EventLog
from ..meta import MetaError
from ..rundir import (
    STATUS_MAX_BYTES,
    atomic_write_json,
    effective_state,
    initial_status,
    process_start,
    read_json,
    status_path,
    write_status,
)
from ..spec_types import RunSpec
from . import engine, folder
from .slots import Slots
from .sweepspec import trial_spec
from .trialrun import LaunchFailed, TrialRun, launch, link

POLL_S = 0.25
RETRIED = ("lost", "stopped")  # outcomes whose trial runs again and does not count
SURPLUS = "asked after the study had its trials (another scheduler asked first); not run"
RESTOP_S = 5.0  # a stop not taken by then is checked again
LAUNCH_WINDOW_S = 60.0  # a trial spec written this recently may still be starting its run (resume)


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def counted(t: optuna.trial.FrozenTrial) -> bool:
    return t.state in (TrialState.COMPLETE, TrialState.PRUNED) or (
        t.state == TrialState.FAIL and t.user_attrs.get("outcome") not in (*RETRIED, "surplus")
    )


def over_budget(trials: list[optuna.trial.FrozenTrial], number: int, budget: int) -> bool:
    """Whether `budget` trials are already finished, running or waiting to run among those numbered
    before trial `number`. Schedulers sharing a study (a database) each check the budget and then
    ask: two of them can both find one trial left and both ask. Optuna numbers trials in the order
    they were asked (under a row lock), so the lower number runs and the higher one is surplus."""
    ahead = sum(
        1 for t in trials if t.number < number and (counted(t) or t.state in (TrialState.RUNNING, TrialState.WAITING))
    )
    return ahead >= budget


def _num(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def failed_run_reason(finished: dict[str, Any] | None) -> dict[str, Any]:
    """Why a trial whose run failed failed, from the run's `run_finished`: `reason` in English
    (`kind: message`, as older readers show it), and the run's error `code` and `params` as
    `error_code` and `error_params`, which the extension words in the user's language
    (docs/sweeps.md). A runner error without a code (none today) gives the reason alone."""
    err = finished.get("error") if finished else None
    if not isinstance(err, dict):
        return {"reason": "the run failed", "reason_code": "run_failed"}
    out: dict[str, Any] = {"reason": f"{err.get('kind')}: {err.get('message')}"}
    if isinstance(err.get("code"), str):
        params = err.get("params")
        out["error_code"] = err["code"]
        out["error_params"] = params if isinstance(params, dict) else {}
    return out


class Scheduler:
    def __init__(self, sweep_dir: str, launch_id: str | None = None, new: bool = False):
        """`launch_id`: the token `sweep --detach` gave this scheduler; `new`: the folder was made by
        this very command (`sweep SPEC` in the foreground). Either way a stop sent while it started is
        for it (_expected)."""
        self.dir = os.path.abspath(sweep_dir)
        self.launch_id, self.new = launch_id, new
        doc = folder.read(self.dir)
        self.sweep_id: str = doc["sweep_id"]
        self.root: str = doc["root"]
        self.sweep: dict[str, Any] = doc["spec"]
        self.base: RunSpec = self.sweep["base"]
        self.metric: str = self.sweep["objective"]["metric"]
        self.host = socket.gethostname()
        self.slots = Slots(self.sweep)
        self.concurrency = min(self.sweep["concurrency"] or len(self.slots.groups), len(self.slots.groups))
        self.active: dict[int, TrialRun] = {}
        self.handles: dict[int, optuna.trial.Trial] = {}
        self.stopping = self.draining = False
        self.study: optuna.Study | None = None
        self.log: EventLog | None = None

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> str:
        """Run (or resume) the sweep to its end; returns its final state."""
        lock_fd = folder.lock(self.dir)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            if not self._expected():
                drop_requests(self.dir)
            resumed = os.path.isfile(os.path.join(self.dir, folder.EVENTS))
            self.log = EventLog(os.path.join(self.dir, folder.EVENTS))
            initial_status(self.dir, os.getpid())
            write_status(self.dir, kind="sweep", pid_start=process_start(os.getpid()), launch_id=None)
            ensure_control_dir(self.dir)
            self.study = engine.open_study(self.sweep, self.dir, self.sweep["study_name"] or self.sweep_id)
            self.log.emit(
                "sweep_started",
                sweep_id=self.sweep_id,
                study_name=self.study.study_name,
                storage=engine.safe_url(self.sweep["storage"]) or folder.JOURNAL,
                trials=self.sweep["trials"],
                concurrency=self.concurrency,
                slots=self.slots.groups,
                npu=self.slots.npu,
                resumed=resumed,
                pid=os.getpid(),
            )
            if not self.slots.groups:
                self._finish("failed", [], "no free device: every NPU npu-smi lists has a process on it")
                state = "failed"
            else:
                self._reconcile()
                state = self._loop()
            # Before the lock is let go: a scheduler started next must find this state, not write over its own.
            write_status(self.dir, state=state, ended_at=time.time(), exit_code=1 if state == "failed" else 0)
        except BaseException as e:
            if self.log:
                self.log.emit("sweep_finished", status="failed", error=exception_error(e))
            write_status(self.dir, state="failed", ended_at=time.time(), exit_code=1)
            raise
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            for tr in self.active.values():
                tr.close()
            if self.log:
                self.log.close()
            os.close(lock_fd)
        return state

    def _expected(self) -> bool:
        """Whether the stops waiting in control/ are for this scheduler: sent while the sweep read as
        running, waiting for it to start. That is so when this command made the folder (`new`), or when
        the status is still the one `sweep --detach` wrote for it (no pid, its token). Otherwise they
        were left for an earlier scheduler that ended (or died) before reading them, and must not end
        this one at its start."""
        if self.new:
            return True
        before = read_json(status_path(self.dir), None, STATUS_MAX_BYTES)
        return (
            self.launch_id is not None
            and isinstance(before, dict)
            and before.get("pid") is None
            and before.get("launch_id") == self.launch_id
        )

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._stop("stop", f"signal {signal.Signals(signum).name}")

    def _loop(self) -> str:
        assert self.study and self.log
        while True:
            self._read_control()
            for tr in list(self.active.values()):
                self._follow(tr)
            trials = self.study.get_trials(deepcopy=False)
            done = sum(1 for t in trials if counted(t))
            running = sum(1 for t in trials if t.state == TrialState.RUNNING)
            lost = sum(1 for t in trials if t.user_attrs.get("outcome") == "lost")
            if lost >= self.sweep["trials"] and not self.active:
                self._finish("failed", trials, f"{lost} trial runs died without a result: see their console.log")
                return "failed"
            if self.stopping or self.draining:
                if not self.active:
                    self._finish("stopped", trials)
                    return "stopped"
            elif done + running >= self.sweep["trials"]:
                if not self.active:
                    self._finish("completed", trials)
                    return "completed"
            elif len(self.active) < self.concurrency and len(self.slots.taken) < len(self.slots.groups):
                self._start_trial()
                continue  # fill every free slot before sleeping
            time.sleep(POLL_S)

    def _finish(self, status: str, trials: list[optuna.trial.FrozenTrial], message: str | None = None) -> None:
        assert self.log
        best = best_trial(self.study) if self.study else None
        self.log.emit(
            "sweep_finished",
            status=status,
            message=message,
            counts=count_states(trials),
            best=best,
        )

    # -- control ------------------------------------------------------------------------------

    def _read_control(self) -> None:
        d = os.path.join(self.dir, "control")
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return
        for name in names:
            if name.startswith("."):
                continue
            action = name.split("-", 1)[0]
            try:
                os.remove(os.path.join(d, name))
            except OSError:
                pass
            if action in ("stop", "drain"):
                self._stop(action, "sweep-stop")

    def _stop(self, mode: str, by: str) -> None:
        if mode == "stop" and not self.stopping:
            self.stopping = True
            for tr in self.active.values():
                self._request_stop(tr)
        elif mode == "drain":
            self.draining = True
        if self.log:
            self.log.emit("sweep_stopping", mode=mode, by=by, active=sorted(self.active))

    def _request_stop(self, tr: TrialRun) -> None:
        tr.stop_sent = time.monotonic()
        try:
            request(tr.run_dir, "stop")
        except OSError as e:
            assert self.log
            self.log.emit(
                "warning",
                code="stop_failed",
                message=f"trial {tr.number}: could not ask its run to stop: {e}",
                details={"trial": tr.number, "error": str(e)},
            )

    # -- trials -------------------------------------------------------------------------------

    def _start_trial(self) -> None:
        assert self.study
        slot = self.slots.take()
        assert slot is not None
        trial = self.study.ask()
        if over_budget(self.study.get_trials(deepcopy=False), trial.number, self.sweep["trials"]):
            self._tell(
                trial, trial.number, TrialState.FAIL, None, "surplus", slot, reason=SURPLUS, reason_code="surplus"
            )
            return
        self._launch(trial, slot)

    def _launch(self, trial: optuna.trial.Trial, slot: int) -> None:
        """Start a trial's run: its values (those a trial asked before a crash has are kept), its spec
        (validated first), `launch`, the tags; a trial that cannot start is told FAIL."""
        assert self.log
        n = trial.number
        run_id = folder.trial_run_id(self.sweep_id, n)
        run_dir = os.path.join(self.root, run_id)
        run = {"run_id": run_id, "run_dir": run_dir, "sweep_dir": self.dir, "host": self.host, "slot": slot}
        trial.set_user_attr("run", run)  # before the run exists: a resume finds it by this
        params = engine.suggest_all(trial, self.sweep)
        spec = trial_spec(self.base, params, f"{self.base['name']}-t{n}")
        spec["device"]["ids"] = self.slots.spec_ids(slot)
        problems = specmod.check(spec, "/")
        if problems:
            self._tell(
                trial,
                n,
                TrialState.FAIL,
                None,
                "invalid",
                slot,
                reason="; ".join(f"{p.path}: {p.message}" for p in problems),
            )
            return
        spec_path = os.path.join(self.dir, "trials", f"t{n}.json")
        atomic_write_json(spec_path, spec)
        try:
            got = launch(spec_path, self.root, run_id, self.slots.env(slot))
        except (LaunchFailed, OSError) as e:
            self._tell(trial, n, TrialState.FAIL, None, "failed", slot, reason=str(e))
            return
        try:
            link(run_dir, self.sweep_id, self.dir, n, params)
        except (OSError, MetaError) as e:
            self.log.emit(
                "warning",
                code="link_failed",
                message=f"trial {n}: could not tag its run: {e}",
                details={"trial": n, "error": str(e)},
            )
        self.active[n] = TrialRun(
            n, run_id, run_dir, slot, params, self.sweep["objective"]["field"], self._epochs(params)
        )
        self.handles[n] = trial
        self.log.emit(
            "trial_started",
            number=n,
            params=params,
            run_id=run_id,
            run_dir=run_dir,
            pid=got.get("pid"),
            slot=slot,
            devices=self.slots.groups[slot],
            retry_of=trial.user_attrs.get("retry_of"),
        )

    def _follow(self, tr: TrialRun) -> None:
        assert self.log
        trial = self.handles[tr.number]
        for epoch, value in tr.poll():
            if epoch in tr.reported:
                continue  # told before a resume
            trial.report(value, epoch)
            tr.reported[epoch] = value
            self.log.emit("trial_reported", number=tr.number, epoch=epoch, value=_num(value))
            last = epoch >= tr.epochs  # the run ends by itself now: nothing left to save
            if tr.pruned_at is None and not self.stopping and not tr.done and not last and trial.should_prune():
                tr.pruned_at = epoch
                trial.set_user_attr("pruned_at", epoch)
                self._request_stop(tr)
                self.log.emit("trial_pruned", number=tr.number, epoch=epoch, value=_num(value), run_id=tr.run_id)
        if (self.stopping or tr.pruned_at is not None) and not tr.done and time.monotonic() - tr.stop_sent > RESTOP_S:
            # A run that is still starting empties control/ when it takes its directory (requests left
            # by a dead process must not reach it): a stop sent before that is gone, so send it again.
            if not any(n.startswith("stop-") for n in _listdir(os.path.join(tr.run_dir, "control"))):
                self._request_stop(tr)
        if not tr.done and tr.launch_deadline and time.time() > tr.launch_deadline:
            tr.lost = not os.path.isfile(status_path(tr.run_dir))
        if tr.done:
            self._finish_trial(tr)

    def _epochs(self, params: dict[str, Any]) -> int:
        return int(params.get("train.epochs", self.base["train"]["epochs"]))

    def _finish_trial(self, tr: TrialRun) -> None:
        trial = self.handles.pop(tr.number)
        del self.active[tr.number]
        tr.close()
        status = tr.finished.get("status") if tr.finished else "lost"
        value = tr.objective(self.metric)
        kw: dict[str, Any] = {"run_id": tr.run_id, "run_state": status}
        if status == "completed" and value is not None:
            self._tell(trial, tr.number, TrialState.COMPLETE, value, "completed", tr.slot, **kw)
        elif status == "completed":
            self._tell(
                trial,
                tr.number,
                TrialState.FAIL,
                None,
                "failed",
                tr.slot,
                reason="no finite eval value",
                reason_code="no_finite_value",
                **kw,
            )
        elif status == "stopped" and tr.pruned_at is not None:
            self._tell(trial, tr.number, TrialState.PRUNED, None, "pruned", tr.slot, pruned_at=tr.pruned_at, **kw)
        elif status == "stopped" and self.stopping:
            self._tell(
                trial,
                tr.number,
                TrialState.FAIL,
                None,
                "stopped",
                tr.slot,
                reason="stopped by sweep-stop",
                reason_code="sweep_stopped",
                **kw,
            )
        elif status == "stopped":  # someone stopped the trial's run: a pruning by hand
            at = max(tr.reported) if tr.reported else None
            trial.set_user_attr("pruned_at", at)
            self._tell(
                trial,
                tr.number,
                TrialState.PRUNED,
                None,
                "pruned",
                tr.slot,
                pruned_at=at,
                reason="its run was stopped",
                reason_code="run_stopped",
                **kw,
            )
        elif status == "failed":
            self._tell(
                trial, tr.number, TrialState.FAIL, None, "failed", tr.slot, **failed_run_reason(tr.finished), **kw
            )
        else:
            self._tell(
                trial,
                tr.number,
                TrialState.FAIL,
                None,
                "lost",
                tr.slot,
                reason="the run ended without a result",
                reason_code="no_result",
                **kw,
            )

    def _tell(
        self,
        trial: optuna.trial.Trial,
        number: int,
        state: TrialState,
        value: float | None,
        outcome: str,
        slot: int | None,
        **event: Any,
    ) -> None:
        assert self.study and self.log
        trial.set_user_attr("outcome", outcome)
        if event.get("reason"):
            trial.set_user_attr("reason", str(event["reason"])[:2000])
        for key in ("reason_code", "error_code", "error_params"):
            if key in event:
                trial.set_user_attr(key, event[key])
        self.study.tell(trial, value if state == TrialState.COMPLETE else None, state=state)
        self.slots.release(slot)
        if outcome in RETRIED and set(trial.params) == set(self.sweep["space"]):
            # The same parameters again, as a new trial (Optuna's own retry: RetryFailedTrialCallback).
            self.study.enqueue_trial(dict(trial.params), user_attrs={"retry_of": number})
        self.log.emit("trial_finished", number=number, state=state.name, value=value, outcome=outcome, **event)

    def _reconcile(self) -> None:
        """Trials that a previous scheduler left RUNNING: follow, tell, retry or start each (see above)."""
        assert self.study and self.log
        journal = not self.sweep["storage"]  # a journal in this folder: every trial is this sweep's
        unlaunched = []
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            run = t.user_attrs.get("run")
            if isinstance(run, dict) and run.get("sweep_dir") not in (None, self.dir):
                continue  # another machine's scheduler (a shared database)
            if not isinstance(run, dict) and not journal:
                continue  # maybe another scheduler, between ask and its first write
            run_id = folder.trial_run_id(self.sweep_id, t.number)
            run_dir = os.path.join(self.root, run_id)
            spec_path = os.path.join(self.dir, "trials", f"t{t.number}.json")
            launched = os.path.isfile(status_path(run_dir))
            if not launched and not os.path.isfile(spec_path):
                unlaunched.append(t)  # asked, never given a run: start it below, as the same trial
                continue
            slot = run.get("slot") if isinstance(run, dict) else None
            slot = slot if isinstance(slot, int) and 0 <= slot < len(self.slots.groups) else None
            self.slots.take(slot)
            params = dict(t.params)
            tr = TrialRun(
                t.number, run_id, run_dir, slot, params, self.sweep["objective"]["field"], self._epochs(params)
            )
            tr.reported = {int(k): v for k, v in t.intermediate_values.items()}
            at = t.user_attrs.get("pruned_at")
            tr.pruned_at = at if isinstance(at, int) else None
            if not launched:  # its `launch` may still be under way (it outlives a killed scheduler)
                tr.launch_deadline = os.path.getmtime(spec_path) + LAUNCH_WINDOW_S
            self.active[t.number] = tr
            self.handles[t.number] = optuna.trial.Trial(self.study, t._trial_id)
            state = effective_state(run_dir) if launched else None
            if tr.pruned_at is not None and state == "running":
                self._request_stop(tr)
            self.log.emit("trial_resumed", number=t.number, run_id=run_id, run_state=state, reported=len(tr.reported))
        for t in unlaunched:
            slot = self.slots.take()
            trial = optuna.trial.Trial(self.study, t._trial_id)
            self.log.emit("trial_resumed", number=t.number, run_id=None, run_state=None, reported=0)
            if slot is None:  # more of them than free slots (the spec's devices cannot change): retry later
                self._tell(
                    trial,
                    t.number,
                    TrialState.FAIL,
                    None,
                    "lost",
                    None,
                    reason="no free slot at resume",
                    reason_code="no_free_slot",
                )
            else:
                self._launch(trial, slot)


def count_states(trials: list[optuna.trial.FrozenTrial]) -> dict[str, int]:
    out = {"complete": 0, "pruned": 0, "fail": 0, "running": 0, "waiting": 0, "counted": 0}
    for t in trials:
        key = t.state.name.lower()
        if key in out:
            out[key] += 1
        out["counted"] += counted(t)
    return out


def best_trial(study: optuna.Study) -> dict[str, Any] | None:
    try:
        b = study.best_trial
    except ValueError:  # no completed trial
        return None
    run = b.user_attrs.get("run")
    return {
        "number": b.number,
        "value": b.value,
        "params": b.params,
        "run_id": run.get("run_id") if isinstance(run, dict) else None,
        "run_dir": run.get("run_dir") if isinstance(run, dict) else None,
    }
